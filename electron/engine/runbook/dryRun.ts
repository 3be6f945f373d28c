import type { ImpactGraph } from '../../../shared/impact.ts';
import type { Config } from '../../../shared/schemas.ts';
import type { PartitionTarget } from '../executor/types.ts';
import { impactScope } from '../impact/impactScope.ts';
import type { Store } from '../store/index.ts';
import type { PreparedPlan } from './prepare.ts';
import { answerQuestions, measureTimed, type Answers, type TimedDryRunRow } from './questions.ts';
import { checkJobSql } from '../sql/jobSql.ts';

export interface DryRunInput {
  prepared: PreparedPlan;
  /** opened by the caller; prepared and closed here */
  target: PartitionTarget;
  store: Store;
  config: Config;
  env: NodeJS.ProcessEnv;
  /** the workspace's jobs folder, for the impact scope (null: the workspace is not looked at) */
  jobsDir: string | null;
  now?: Date;
  onRow?: (row: TimedDryRunRow, index: number) => void;
}

export interface DryRunResult {
  rows: TimedDryRunRow[];
  answers: Answers;
  impact: ImpactGraph;
  evidenceId: number;
}

/** What a dry run keeps as evidence (and a sign-off request carries, hashed): read back by views, notes and gates. */
export interface DryRunBody {
  jobHash: string;
  summary: string;
  tier: string;
  partitions: TimedDryRunRow[];
  /** each partition's red flags (shared/partitionFlags.ts) */
  flags?: Answers['partitions'];
  /** the same, one per question, and the run-level ones */
  redFlags?: Answers['flags'];
  estimate?: Answers['estimate'];
  impact?: ImpactGraph;
}

/**
 * Measures every partition in READ ONLY transactions (it cannot write by construction), asks
 * the dry run's questions, derives the impact scope, and keeps it all as evidence bound to the
 * plan's hash: the "dry run on record".
 */
export async function dryRun(input: DryRunInput): Promise<DryRunResult> {
  const { prepared, target, store } = input;
  const now = input.now ?? new Date();
  let rows: TimedDryRunRow[];
  let answers: Answers;
  try {
    await checkJobSql(prepared.job);
    // Inside the try: a dry run that fails while preparing (bad SQL, a missing table) still
    // closes every session it opened, so the CLI exits and the server keeps no session of ours.
    await target.prepare();
    rows = await measureTimed(target, prepared.partitions, input.onRow);
    answers = await answerQuestions({
      prepared,
      config: input.config,
      env: input.env,
      store,
      target,
      partitions: prepared.partitions,
      rows,
      now,
    });
  } finally {
    await target.close();
  }
  const impact = await impactScope({ job: prepared.job, config: input.config, env: input.env, jobsDir: input.jobsDir });
  store.plans.save({ planHash: prepared.planHash, requestId: prepared.plan.request_id, jobName: prepared.job.name, plan: prepared.plan });
  const body: DryRunBody = {
    jobHash: prepared.jobHash,
    summary: prepared.summary,
    tier: prepared.tier,
    partitions: rows,
    flags: answers.partitions,
    redFlags: answers.flags,
    estimate: answers.estimate,
    impact,
  };
  const evidence = store.evidence.add({ runId: null, planHash: prepared.planHash, kind: 'dry-run', body });
  return { rows, answers, impact, evidenceId: evidence.id };
}
