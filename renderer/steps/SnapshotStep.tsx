/** Step 2: copy the partitions about to be overwritten; where the copy is, with counts and checksums. */
import { VirtualTable } from '../components/VirtualTable.tsx';
import { int, when } from '../lib/format.ts';
import type { StepProps } from '../screens/RunbookScreen.tsx';
import { ActionButton, StepFrame } from './StepFrame.tsx';
import { useAction } from './useAction.ts';

export function SnapshotStep(props: StepProps) {
  const action = useAction('runbook:snapshot', 'Take the snapshot', props.refresh);
  const shown = action.result ?? props.recorded?.snapshot ?? null;
  const items = shown?.partitions.reduce((n, p) => n + p.items, 0) ?? 0;
  return (
    <StepFrame id="snapshot" props={props}>
      <p>
        Before anything is overwritten, the target's current rows of every partition in the plan are copied aside, so any partition can be
        restored.
      </p>
      <ActionButton busy={action.busy} onClick={() => void action.run({ runId: props.runId })}>
        {shown ? 'Take a new snapshot' : 'Take the snapshot'}
      </ActionButton>
      {shown && (
        <>
          <dl className="facts">
            <dt>Where</dt>
            <dd className="mono" data-testid="snapshot-location">
              {shown.location}
            </dd>
            <dt>Copied</dt>
            <dd>
              {int(items)} {shown.target === 's3' ? 'objects' : 'rows'} in {shown.partitions.length} partitions
            </dd>
            <dt>Taken</dt>
            <dd>{when(shown.createdAt)}</dd>
          </dl>
          <VirtualTable
            label="Snapshot per partition"
            rows={shown.partitions}
            rowKey={(r, i) => r?.key ?? String(i)}
            height={260}
            columns={[
              { header: 'Partition', width: '10rem', cell: (r) => r.key },
              { header: shown.target === 's3' ? 'Objects' : 'Rows', width: '8rem', align: 'right', cell: (r) => int(r.items) },
              {
                header: 'Checksum (md5 of the rows)',
                width: 'minmax(12rem, 1fr)',
                cell: (r) => <span className="mono">{r.checksum ?? (r.bytes !== null ? `${int(r.bytes)} bytes` : '–')}</span>,
              },
            ]}
          />
        </>
      )}
    </StepFrame>
  );
}
