/**
 * The gates every execution passes, app and CLI alike (the CLI is not a side door). Each gate
 * returns the reasons it refuses; any reason refuses the run (GateError, CLI exit 4).
 * Gates are listed in the order an operator meets them in the runbook.
 */
import { GateError } from '../../../shared/errors.ts';
import { blocking } from '../../../shared/redFlags.ts';
import type { Config, Plan } from '../../../shared/schemas.ts';
import type { Store } from '../store/index.ts';
import type { PreparedPlan } from './prepare.ts';
import type { PartitionTarget } from '../executor/types.ts';
import type { SanityReport } from '../safety/sanity.ts';
import { sanityGate } from '../safety/sanityGate.ts';
import { signoffGate } from './signoffGate.ts';
import { prefixGate } from './prefixGate.ts';
import { questionsGate } from './questionsGate.ts';
import type { Answers } from './questions.ts';
import { checkJobSql } from '../sql/jobSql.ts';

export interface GateContext {
  prepared: PreparedPlan;
  store: Store;
  config: Config;
  /** who executes: the four-eyes rule compares it with the signer */
  operator: string;
  /** where passwords come from (the app adds the ones it keeps) */
  env?: NodeJS.ProcessEnv;
  /** sees the source sanity report the gate takes (the CLI prints it; it is kept as evidence) */
  onSanity?: (report: SanityReport) => void;
  /** the plan as it will execute: the signed one with a resume's retuned throttle and thresholds */
  executed?: Plan;
  /** sees the dry run's questions as the questions gate answered them (accepted flags are kept as evidence) */
  onQuestions?: (answers: Answers) => void;
  /**
   * Opens (once) the target the execution will write through: the questions gate prepares and
   * asks it, and leaves it open, so its bucket checks and cleanup serve the execution too.
   * Without it the gate opens a target of its own and closes it.
   */
  target?: () => PartitionTarget;
}

export type Gate = (ctx: GateContext) => Promise<string[]> | string[];

// Partition flags (retention) are the questions gate's to report, asked over the partitions still to write.
const redFlagGate: Gate = ({ prepared }) =>
  blocking(prepared.flags.filter((f) => !f.partitions)).map((f) => `red flag ${f.code}: ${f.message}`);

/** Add a gate here; keep each in its own module when it grows. */
export const GATES: readonly Gate[] = [redFlagGate, questionsGate, sanityGate, signoffGate, prefixGate];

export async function checkExecutionGates(ctx: GateContext, gates: readonly Gate[] = GATES): Promise<void> {
  // Not a gate but bad input (exit 2), before any gate touches a server: SQL that could write.
  await checkJobSql(ctx.prepared.job);
  const reasons: string[] = [];
  for (const gate of gates) reasons.push(...(await gate(ctx)));
  if (reasons.length > 0) throw new GateError(`refused: ${reasons.length} gate(s) block this run`, reasons);
}
