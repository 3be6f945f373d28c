/**
 * The dry run's questions, asked again as the run starts (or resumes), over the partitions it is
 * about to write: the dry run on record for this plan gives the measures (or, without one, the
 * gate measures now, read-only — a source that is gone blocks in every tier); closed partitions,
 * who published what, and the window are asked now. Blocking answers refuse the run (exit 4).
 */
import { blocking } from '../../../shared/redFlags.ts';
import type { Gate, GateContext } from './gates.ts';
import type { DryRunBody } from './dryRun.ts';
import { openTarget } from './prepare.ts';
import { answerQuestions, measureTimed, type Answers, type TimedDryRunRow } from './questions.ts';

/** The answers for an execution starting now: what the gate judges (exported for the views). */
export async function answersForExecution(ctx: GateContext, now = new Date()): Promise<Answers> {
  const { prepared, store, config } = ctx;
  const env = ctx.env ?? process.env;
  const run = store.runs.get(prepared.plan.request_id);
  const done = new Set(
    run
      ? store.partitions
          .list(run.runId)
          .filter((p) => p.status === 'published')
          .map((p) => p.key)
      : [],
  );
  const toWrite = prepared.partitions.filter((p) => !done.has(p.key));
  const dry = store.evidence
    .list({ planHash: prepared.planHash, kind: 'dry-run' })
    .reverse()
    .find((e) => (e.body as Partial<DryRunBody> | null)?.jobHash === prepared.jobHash);
  const recorded = new Map(((dry?.body as DryRunBody | undefined)?.partitions ?? []).map((r) => [r.partition.key, r]));
  const target = openTarget(config, prepared.job, prepared.plan.write_mode, env, store);
  try {
    await target.prepare();
    const missing = toWrite.filter((p) => !recorded.has(p.key));
    const measured = new Map<string, TimedDryRunRow>();
    for (const p of missing) {
      // A partition that cannot even be read (an incomplete S3 drop, a corrupt object) is left to
      // the executor, which records why it fails, exactly as it would without this gate.
      const [row] = await measureTimed(target, [p]).catch(() => []);
      if (row) measured.set(p.key, row);
    }
    const rows = toWrite.map((p) => recorded.get(p.key) ?? measured.get(p.key)).filter((r): r is TimedDryRunRow => r !== undefined);
    return await answerQuestions({ prepared, config, env, store, target, rows: rows.map((r) => ({ ...r, ms: r.ms ?? 0 })), now });
  } finally {
    await target.close();
  }
}

export const questionsGate: Gate = async (ctx) => {
  const answers = await answersForExecution(ctx);
  ctx.onQuestions?.(answers);
  return blocking(answers.flags).map((f) => `red flag ${f.code}: ${f.message}`);
};
