/**
 * Step 6: source vs target per partition, measured again after the run; differences highlighted;
 * kept as evidence. With a snapshot on record it also shows what the run changed by key (each
 * partition against its snapshot) beside what the dry run predicted.
 */
import type { ComparisonView } from '../../shared/contractTypes.ts';
import { ChangeByKey } from '../components/ChangeByKey.tsx';
import { Badge } from '../components/StatusBadge.tsx';
import { VirtualTable } from '../components/VirtualTable.tsx';
import { int, measure, signed, when } from '../lib/format.ts';
import type { StepProps } from '../screens/RunbookScreen.tsx';
import { ActionButton, StepFrame } from './StepFrame.tsx';
import { useAction } from './useAction.ts';

type Row = ComparisonView['rows'][number];

export function CompareStep(props: StepProps) {
  const action = useAction('run:compare', 'Capture the row-count comparison', props.refresh);
  const shown = action.result ?? props.recorded?.comparison ?? null;
  const differing = shown?.rows.filter((r) => !r.ok) ?? [];
  const ruleName = shown?.rows.find((r) => r.checks[0])?.checks[0]?.rule ?? 'first rule';
  return (
    <StepFrame id="compare" props={props}>
      <p>
        Completion is verified, not assumed: every published partition is measured again on source and target (read-only) and the result is
        kept as evidence.
      </p>
      <ActionButton primary={!shown} busy={action.busy} onClick={() => void action.run({ runId: props.runId })}>
        {shown ? 'Capture again' : 'Capture the comparison'}
      </ActionButton>
      {shown && (
        <>
          {shown.keys.actual ? (
            <ChangeByKey
              totals={shown.keys.actual}
              what="the run made (each partition against its snapshot)"
              predicted={shown.keys.predicted}
            />
          ) : (
            <p className="muted" data-testid="compare-keys-why">
              What the run changed by key was not measured: {shown.keys.why ?? 'not measured'}.
            </p>
          )}
          <p className={differing.length === 0 ? 'banner banner-ok' : 'banner banner-danger'} data-testid="compare-verdict">
            {differing.length === 0
              ? `Source and target agree on all ${shown.rows.length} partitions.`
              : `${differing.length} of ${shown.rows.length} partitions differ (highlighted).`}{' '}
            Captured {when(shown.createdAt)}.
          </p>
          <VirtualTable<Row>
            label="Row-count comparison per partition"
            rows={shown.rows}
            rowKey={(r, i) => r?.key ?? String(i)}
            rowClass={(r) => (r.ok ? '' : 'row-bad')}
            columns={[
              { header: 'Partition', width: '9rem', cell: (r) => r.key },
              // The first validation rule's `rows` measure on each side (what it counts is the job's: refunds, orders…).
              { header: `Source count (${ruleName})`, width: '10rem', align: 'right', cell: (r) => int(r.sourceRows) },
              { header: `Target count (${ruleName})`, width: '10rem', align: 'right', cell: (r) => int(r.targetRows) },
              {
                header: 'Difference',
                width: '7rem',
                align: 'right',
                cell: (r) => <span className={r.difference ? 'danger' : 'muted'}>{signed(r.difference)}</span>,
              },
              { header: 'Rows in partition', width: '7.5rem', align: 'right', cell: (r) => int(r.partitionRows) },
              {
                header: 'Rows published',
                width: '7rem',
                align: 'right',
                cell: (r) => (
                  <span className={r.markedRows !== null && r.markedRows !== r.partitionRows ? 'danger' : undefined}>
                    {int(r.markedRows)}
                  </span>
                ),
              },
              {
                header: 'Every validation measure (source vs target)',
                width: 'minmax(16rem, 1fr)',
                cell: (r) =>
                  r.checks.length === 0
                    ? '–'
                    : r.checks
                        .map(
                          (c) =>
                            `${Object.keys(c.source)
                              .filter((k) => k in c.target)
                              .map((k) => `${k} ${measure(c.source[k])} vs ${measure(c.target[k])}`)
                              .join(', ')}`,
                        )
                        .join(' · '),
              },
              {
                header: 'Result',
                width: '7rem',
                cell: (r) =>
                  r.ok ? (
                    <Badge tone="ok">agrees</Badge>
                  ) : (
                    <Badge tone="danger" title={r.problems.join('; ')}>
                      differs
                    </Badge>
                  ),
              },
            ]}
          />
          {differing.length > 0 && (
            <ul className="reasons danger">
              {differing.slice(0, 20).map((r) => (
                <li key={r.key}>
                  {r.key}: {r.problems.join('; ')}
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </StepFrame>
  );
}
