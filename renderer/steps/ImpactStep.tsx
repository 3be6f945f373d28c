/**
 * Step 3, impact scope: the dry run as a table per partition (source rows and sums, target now,
 * expected change), the tables downstream as a graph, and the range in words.
 */
import { DownstreamGraph } from '../components/DownstreamGraph.tsx';
import { DryRunQuestions } from '../components/DryRunQuestions.tsx';
import { ImpactGraph } from '../components/ImpactGraph.tsx';
import { PartitionFlags } from '../components/PartitionFlags.tsx';
import { VirtualTable, type Column } from '../components/VirtualTable.tsx';
import type { DryRunView } from '../../shared/contractTypes.ts';
import { int, measure, signed, when } from '../lib/format.ts';
import type { StepProps } from '../screens/RunbookScreen.tsx';
import { ActionButton, StepFrame } from './StepFrame.tsx';
import { useAction } from './useAction.ts';

type Row = DryRunView['rows'][number];

function columnsOf(rows: readonly Row[]): Column<Row>[] {
  const keys = [...new Set(rows.flatMap((r) => Object.keys(r.source)))].filter((k) => k !== 'rows');
  const change = (v: string | number | null | undefined) => {
    const n = Number(v ?? 0);
    return (
      <span className={n === 0 ? 'muted' : n > 0 ? 'up' : 'down'}>
        {n > 0 ? '+' : ''}
        {measure(v)}
      </span>
    );
  };
  return [
    { header: 'Partition', width: '9rem', cell: (r) => r.key },
    { header: 'Source rows', width: '7rem', align: 'right', cell: (r) => measure(r.source.rows) },
    { header: 'Target now', width: '7rem', align: 'right', cell: (r) => measure(r.target.rows) },
    { header: 'Change', width: '6rem', align: 'right', cell: (r) => change(r.change.rows) },
    ...keys.map((k): Column<Row> => ({
      header: `${k}: source → now (change)`,
      width: 'minmax(14rem, 1fr)',
      align: 'right',
      cell: (r) => (
        <>
          {measure(r.source[k])} → {measure(r.target[k])} ({change(r.change[k])})
        </>
      ),
    })),
    // Last, so the measure columns keep their places.
    {
      header: 'Red flags',
      width: 'minmax(10rem, 1fr)',
      cell: (r) => <PartitionFlags flags={r.flags} />,
    },
  ];
}

export function ImpactStep(props: StepProps) {
  const action = useAction('runbook:dryRun', 'Run the dry run', props.refresh);
  const shown = action.result ?? props.recorded?.dryRun ?? null;
  const totalChange = shown?.rows.reduce((n, r) => n + Number(r.change.rows ?? 0), 0) ?? 0;
  const totalSource = shown?.rows.reduce((n, r) => n + Number(r.source.rows ?? 0), 0) ?? 0;
  const source = props.view.job.name;
  return (
    <StepFrame id="impact" props={props}>
      <p className="range-words" data-testid="impact-range">
        {props.view.summary}
      </p>
      {shown?.impact ? (
        <ImpactGraph graph={shown.impact} />
      ) : (
        <DownstreamGraph source={`job ${source}`} target={props.view.job.target} downstream={props.view.job.downstream} />
      )}
      <p>
        The dry run measures every partition in READ ONLY transactions: it cannot write. It is kept as evidence bound to this exact plan.
      </p>
      <ActionButton busy={action.busy} onClick={() => void action.run({ runId: props.runId })}>
        {shown ? 'Measure again' : 'Run the dry run'}
      </ActionButton>
      {shown && (
        <>
          <p data-testid="impact-totals">
            <strong>{int(totalSource)}</strong> source rows over {shown.rows.length} partitions; the target would change by{' '}
            <strong>{signed(totalChange)}</strong> rows. Measured {when(shown.createdAt)}.
          </p>
          <DryRunQuestions dryRun={shown} />
          <VirtualTable
            label="Dry run per partition"
            rows={shown.rows}
            rowKey={(r, i) => r?.key ?? String(i)}
            columns={columnsOf(shown.rows)}
            rowClass={(r) =>
              r.flags.some((f) => f.severity === 'block') ? 'row-blocked' : Number(r.change.rows ?? 0) !== 0 ? 'row-changed' : ''
            }
          />
        </>
      )}
    </StepFrame>
  );
}
