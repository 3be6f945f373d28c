import type { DryRunRow, PartitionTarget } from '../executor/types.ts';
import type { Store } from '../store/index.ts';
import type { PreparedPlan } from './prepare.ts';
import { checkJobSql } from '../sql/jobSql.ts';

export interface DryRunResult {
  rows: DryRunRow[];
  evidenceId: number;
}

/**
 * Measures every partition in READ ONLY transactions (it cannot write by construction) and
 * keeps the result as evidence bound to the plan's hash: the "dry run on record".
 */
export async function dryRun(
  prepared: PreparedPlan,
  target: PartitionTarget,
  store: Store,
  onRow?: (row: DryRunRow, index: number) => void,
): Promise<DryRunResult> {
  const rows: DryRunRow[] = [];
  try {
    await checkJobSql(prepared.job);
    // Inside the try: a dry run that fails while preparing (bad SQL, a missing table) still
    // closes every session it opened, so the CLI exits and the server keeps no session of ours.
    await target.prepare();
    for (const [index, partition] of prepared.partitions.entries()) {
      const row = await target.measure(partition);
      rows.push(row);
      onRow?.(row, index);
    }
  } finally {
    await target.close();
  }
  store.plans.save({ planHash: prepared.planHash, requestId: prepared.plan.request_id, jobName: prepared.job.name, plan: prepared.plan });
  const evidence = store.evidence.add({
    runId: null,
    planHash: prepared.planHash,
    kind: 'dry-run',
    body: { jobHash: prepared.jobHash, summary: prepared.summary, tier: prepared.tier, partitions: rows },
  });
  return { rows, evidenceId: evidence.id };
}
