/**
 * "Downstream to notify": the tables the job declares as reading its target, and the plan's
 * owner — who to tell that past data changed, and how much of it.
 */
import { keysTouched, totalKeyChange } from '../../../../shared/keyChange.ts';
import { str, type NoteSection } from './blocks.ts';
import type { NoteFacts } from './facts.ts';

export function downstreamSection(f: NoteFacts): NoteSection {
  const changes = f.actual.length > 0 ? f.actual : f.predicted;
  const totals = changes.length > 0 ? totalKeyChange(changes) : null;
  const range = (f.plan.range ?? {}) as Record<string, unknown>;
  const what = totals
    ? `${keysTouched(totals)} keys in ${totals.partitionsChanged} of ${totals.partitions} partitions (${str(range.from)} to ${str(range.to)})`
    : `partitions ${str(range.from)} to ${str(range.to)}`;
  if (f.downstream.length === 0)
    return {
      title: 'Downstream to notify',
      blocks: [
        { kind: 'text', text: `The job declares no downstream tables (classification.downstream is empty): nobody to notify of ${what}.` },
      ],
    };
  return {
    title: 'Downstream to notify',
    blocks: [
      {
        kind: 'text',
        text: `Tell the owners of these tables that ${what} of ${str(f.run.jobName)} were recomputed; anything they derived from that range may need recomputing too.`,
      },
      {
        kind: 'table',
        table: {
          header: ['downstream table', 'reads', 'plan owner'],
          rows: f.downstream.map((d) => [d, str(targetTable(f.job)), str(f.plan.owner)]),
        },
      },
    ],
  };
}

function targetTable(job: Record<string, unknown>): unknown {
  const t = (job.target ?? {}) as Record<string, unknown>;
  return t.table ?? t.path;
}
