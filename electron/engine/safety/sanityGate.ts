import type { Gate } from '../runbook/gates.ts';
import { runSanityChecks } from './sanity.ts';

/**
 * The source sanity gate: a failing `fail`-severity quality rule stops the run before the
 * first write. Uses the report the caller already took (to show it) or takes one now.
 */
export const sanityGate: Gate = async (ctx) => {
  const report = ctx.sanity ?? (await runSanityChecks(ctx.prepared, ctx.config, ctx.store));
  return report.results
    .filter((r) => !r.ok && r.severity === 'fail')
    .map((r) => `source sanity check ${r.rule} failed: ${r.message} (value ${r.value ?? '–'}, threshold ${r.threshold})`);
};
