/**
 * The Close step's offer (source article 003, step 7: "downstream 재처리를 결정한다"): a plan for
 * each job downstream of the target over the same range — in the job's own unit, covering the
 * range — in the order they must run. Pure: the engine fills it from the dry run's impact graph.
 */
import { downstreamJobsInOrder, type ImpactGraph } from './impact.ts';
import type { Unit, WriteMode } from './schemas.ts';

export interface DownstreamPlan {
  job: string;
  unit: Unit;
  /** why it is downstream (the graph node's reason) */
  reason: string;
  /** the downstream jobs whose output it reads: run them first */
  after: string[];
  plan: { request_id: string; job: string; range: { from: string; to: string }; write_mode: WriteMode; reason: string };
}

const BOUNDARY = /^(\d{4})-(\d{2})(?:-(\d{2})(?:T(\d{2}))?)?$/;

function fields(text: string): [number, number, number, number] | null {
  const m = BOUNDARY.exec(text.trim());
  if (!m) return null;
  return [Number(m[1]), Number(m[2]), Number(m[3] ?? '1'), Number(m[4] ?? '0')];
}

function format([y, mo, d, h]: [number, number, number, number], unit: Unit): string {
  const date = new Date(Date.UTC(y, mo - 1, d, h));
  const iso = date.toISOString();
  return unit === 'month' ? iso.slice(0, 7) : unit === 'day' ? iso.slice(0, 10) : iso.slice(0, 13);
}

/**
 * A half-open range given in one unit, as the smallest range of another unit that covers it:
 * days 2026-05-01 → 2026-05-04 are the months 2026-05 → 2026-06. Wall-clock text in, text out.
 */
export function coveringRange(range: { from: string; to: string }, unit: Unit): { from: string; to: string } {
  const from = fields(range.from);
  const to = fields(range.to);
  if (!from || !to) return range;
  const floor = ([y, mo, d, h]: [number, number, number, number]): [number, number, number, number] =>
    unit === 'month' ? [y, mo, 1, 0] : unit === 'day' ? [y, mo, d, 0] : [y, mo, d, h];
  const down = floor(to);
  const exact = down.every((v, i) => v === to[i]);
  const [y, mo, d, h] = down;
  const up: [number, number, number, number] = exact
    ? down
    : unit === 'month'
      ? [y, mo + 1, 1, 0]
      : unit === 'day'
        ? [y, mo, d + 1, 0]
        : [y, mo, d, h + 1];
  return { from: format(floor(from), unit), to: format(up, unit) };
}

export function downstreamPlans(
  graph: ImpactGraph,
  run: { runId: string; range: { from: string; to: string } },
  writeModeOf: (job: string) => WriteMode,
): DownstreamPlan[] {
  return downstreamJobsInOrder(graph).flatMap(({ node, after }) => {
    const job = node.job;
    if (!job) return [];
    const unit = job.unit as Unit;
    return [
      {
        job: job.name,
        unit,
        reason: node.reason,
        after,
        plan: {
          request_id: `${run.runId}-then-${job.name}`.slice(0, 128),
          job: job.name,
          range: coveringRange(run.range, unit),
          write_mode: writeModeOf(job.name),
          reason: `downstream of backfill ${run.runId}: ${node.reason}`,
        },
      },
    ];
  });
}
