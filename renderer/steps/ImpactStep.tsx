/**
 * Step 3, impact scope. It leads with the change by key — what the run adds, removes and changes
 * at the target's grain, with charts over the partitions — because totals can stay equal while
 * keys move. Then the dry run's questions and the dry run per partition (rows now and after,
 * sums, each partition's red flags), the impact scope as a graph, and the range in words.
 */
import { ChangeByKey } from '../components/ChangeByKey.tsx';
import { ChangeCharts } from '../components/ChangeCharts.tsx';
import { DownstreamGraph } from '../components/DownstreamGraph.tsx';
import { DryRunQuestions } from '../components/DryRunQuestions.tsx';
import { ImpactGraph } from '../components/ImpactGraph.tsx';
import { PartitionFlags } from '../components/PartitionFlags.tsx';
import { VirtualTable, type Column } from '../components/VirtualTable.tsx';
import type { DryRunView } from '../../shared/contractTypes.ts';
import { keysTouched } from '../../shared/keyChange.ts';
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
  // The same words in every step: "now" is the target before the run, "after" what the run writes.
  return [
    { header: 'Partition', width: '9rem', cell: (r) => r.key },
    { header: 'Rows now', width: '6.5rem', align: 'right', cell: (r) => measure(r.target.rows) },
    { header: 'Rows after', width: '6.5rem', align: 'right', cell: (r) => measure(r.source.rows) },
    { header: 'Row change', width: '6.5rem', align: 'right', cell: (r) => change(r.change.rows) },
    {
      header: 'Keys added / removed / changed',
      width: '11rem',
      align: 'right',
      cell: (r) =>
        r.keys ? (
          <span className={keysTouched(r.keys) > 0 ? 'up' : 'muted'}>{`${r.keys.added} / ${r.keys.removed} / ${r.keys.changed}`}</span>
        ) : (
          '–'
        ),
    },
    ...keys.map((k): Column<Row> => ({
      header: `${k}: now → after (change)`,
      width: 'minmax(14rem, 1fr)',
      align: 'right',
      cell: (r) => (
        <>
          {measure(r.target[k])} → {measure(r.source[k])} ({change(r.change[k])})
        </>
      ),
    })),
    // Last, so the measure columns keep their places.
    { header: 'Red flags', width: 'minmax(10rem, 1fr)', cell: (r) => <PartitionFlags flags={r.flags} /> },
  ];
}

export function ImpactStep(props: StepProps) {
  const action = useAction('runbook:dryRun', 'Run the dry run', props.refresh);
  const shown = action.result ?? props.recorded?.dryRun ?? null;
  const totalChange = shown?.rows.reduce((n, r) => n + Number(r.change.rows ?? 0), 0) ?? 0;
  const totalSource = shown?.rows.reduce((n, r) => n + Number(r.source.rows ?? 0), 0) ?? 0;
  const totalTarget = shown?.rows.reduce((n, r) => n + Number(r.target.rows ?? 0), 0) ?? 0;
  const source = props.view.job.name;
  return (
    <StepFrame id="impact" props={props}>
      <p className="range-words" data-testid="impact-range">
        {props.view.summary}
      </p>
      {shown &&
        (shown.keys ? (
          <ChangeByKey totals={shown.keys} what="the run would make" />
        ) : (
          <p className="muted">The target cannot measure a change by key (S3): the row counts below are the impact.</p>
        ))}
      {shown && <ChangeCharts rows={shown.rows} />}
      <p>
        The dry run measures every partition in READ ONLY transactions: it cannot write. It is kept as evidence bound to this exact plan.
      </p>
      <ActionButton primary={!shown} busy={action.busy} onClick={() => void action.run({ runId: props.runId })}>
        {shown ? 'Measure again' : 'Run the dry run'}
      </ActionButton>
      {shown && (
        <>
          <p data-testid="impact-totals">
            <strong>{int(totalTarget)}</strong> rows now, <strong>{int(totalSource)}</strong> after the run, over {shown.rows.length}{' '}
            partitions (<strong>{signed(totalChange)}</strong> rows). Measured {when(shown.createdAt)}.
          </p>
          <DryRunQuestions dryRun={shown} />
          <VirtualTable
            label="Dry run per partition"
            rows={shown.rows}
            rowKey={(r, i) => r?.key ?? String(i)}
            columns={columnsOf(shown.rows)}
            rowClass={(r) =>
              r.flags.some((f) => f.severity === 'block')
                ? 'row-blocked'
                : Number(r.change.rows ?? 0) !== 0 || (r.keys && keysTouched(r.keys) > 0)
                  ? 'row-changed'
                  : ''
            }
          />
        </>
      )}
      {shown?.impact ? (
        <ImpactGraph graph={shown.impact} />
      ) : (
        <DownstreamGraph source={`job ${source}`} target={props.view.job.target} downstream={props.view.job.downstream} />
      )}
    </StepFrame>
  );
}
