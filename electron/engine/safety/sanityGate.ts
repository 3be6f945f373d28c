import type { Gate } from '../runbook/gates.ts';
import { runSanityChecks } from './sanity.ts';

/**
 * The source sanity gate: a failing `fail`-severity quality rule stops the run before the
 * first write — and before a resume writes again. It measures the source as it is now (kept as
 * evidence), never a report from earlier: the source may have gone bad since.
 */
export const sanityGate: Gate = async (ctx) => {
  const report = await runSanityChecks(ctx.prepared, ctx.config, ctx.store, ctx.env);
  ctx.onSanity?.(report);
  return report.results
    .filter((r) => !r.ok && r.severity === 'fail')
    .map((r) => `source sanity check ${r.rule} failed: ${r.message} (value ${r.value ?? '–'}, threshold ${r.threshold})`);
};
