/**
 * The Close step's pre-filled plans for the jobs downstream of this run's target, from the impact
 * graph its dry run derived (shared/downstreamPlans.ts), in the order they must run. Creating one
 * is the ordinary plans:create: each starts its own runbook.
 */
import { downstreamPlans, type DownstreamPlan } from '../../../shared/downstreamPlans.ts';
import type { WriteMode } from '../../../shared/schemas.ts';
import { loadJob } from '../plan/load.ts';
import type { DryRunBody } from './dryRun.ts';
import { contextOf, engineConfig, type EngineScope } from './scope.ts';

export function downstreamPlansOf(scope: EngineScope, runId: string): DownstreamPlan[] {
  const ctx = contextOf(scope, runId);
  const dry = scope.store.evidence
    .list({ planHash: ctx.prepared.planHash, kind: 'dry-run' })
    .reverse()
    .find((e) => (e.body as Partial<DryRunBody> | null)?.jobHash === ctx.run.jobHash);
  const impact = (dry?.body as DryRunBody | undefined)?.impact;
  if (!impact) return [];
  const { config } = engineConfig(scope);
  const writeModeOf = (job: string): WriteMode => {
    try {
      return loadJob(scope.workspace.info.jobsDir, job, config).job.write_mode;
    } catch {
      return 'overwrite-partition'; // the form shows the job's problem when the plan is created
    }
  };
  return downstreamPlans(impact, { runId, range: ctx.plan.range }, writeModeOf);
}
