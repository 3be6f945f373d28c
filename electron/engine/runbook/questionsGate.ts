/**
 * The dry run's questions, asked again as the run starts (or resumes), over the partitions it is
 * about to write: the measures come from the dry run on record for this plan (the size and
 * source questions are answered from them); closed partitions, retention, who published what
 * and the window are asked now. Without a dry run on record (the semi-automatic and automatic
 * tiers may skip it; the no-dry-run flag says so) nothing is measured here: measuring is the
 * dry run's work, and doing it again before every run would read every partition twice.
 * Blocking answers refuse the run (exit 4).
 */
import { blocking } from '../../../shared/redFlags.ts';
import type { Gate, GateContext } from './gates.ts';
import type { DryRunBody } from './dryRun.ts';
import { openTarget } from './prepare.ts';
import { answerQuestions, type Answers, type TimedDryRunRow } from './questions.ts';

/** The answers for an execution starting now: what the gate judges. */
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
  const rows = toWrite
    .map((p) => recorded.get(p.key))
    .filter((r): r is TimedDryRunRow => r !== undefined)
    // a dry run recorded before its reads were timed
    .map((r) => ({ ...r, ms: typeof r.ms === 'number' ? r.ms : 0 }));
  const target = ctx.target?.() ?? openTarget(config, prepared.job, prepared.plan.write_mode, env, store);
  try {
    await target.prepare();
    return await answerQuestions({ prepared, config, env, store, target, partitions: toWrite, rows, now, executed: ctx.executed });
  } finally {
    if (!ctx.target) await target.close();
  }
}

export const questionsGate: Gate = async (ctx) => {
  const answers = await answersForExecution(ctx);
  ctx.onQuestions?.(answers);
  return blocking(answers.flags).map((f) => `red flag ${f.code}: ${f.message}`);
};
