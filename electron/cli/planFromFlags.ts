/**
 * Builds the plan of a run from command-line flags, or checks flags against a saved plan
 * file: a flag that contradicts the plan is an error, never a silent override (DESIGN §5).
 */
import { userInfo } from 'node:os';
import type { Job, Plan } from '../../shared/schemas.ts';
import { planSchema } from '../../shared/schemas.ts';
import { InputError, showValue } from '../../shared/errors.ts';

export interface RunFlags {
  from?: string;
  to?: string;
  unit?: string;
  mode?: string;
  sleepMs?: number;
  concurrency?: number;
  runId?: string;
  reason?: string;
  requestedBy?: string;
  maxConsecutiveFailures?: number;
  maxReplicationLagS?: number;
  replica?: string;
  maxLockWaitMs?: number;
  maxRowDiffRatio?: number;
  /** commander turns --no-run-window into runWindow (its "no-" prefix rule): see stopFromFlags */
  runWindow?: string | boolean;
  panicFile?: string;
}

const FLAG_OF_FIELD: Record<string, string> = {
  request_id: '--run-id',
  'range.from': '--from',
  'range.to': '--to',
  unit: '--unit',
  write_mode: '--mode',
  'throttle.sleep_ms': '--sleep-ms',
  'throttle.concurrency': '--concurrency',
  'stop.max_consecutive_failures': '--max-consecutive-failures',
  'stop.max_replication_lag_s': '--max-replication-lag-s',
  'stop.replica': '--replica',
  'stop.max_lock_wait_ms': '--max-lock-wait-ms',
  'stop.max_row_diff_ratio': '--max-row-diff-ratio',
  'stop.no_run_window.from': '--no-run-window',
  'stop.no_run_window.to': '--no-run-window',
  'stop.panic_file': '--panic-file',
};

function stopFromFlags(flags: RunFlags): Record<string, unknown> {
  const stop: Record<string, unknown> = {};
  if (flags.maxConsecutiveFailures) stop.max_consecutive_failures = flags.maxConsecutiveFailures;
  if (flags.maxReplicationLagS !== undefined) stop.max_replication_lag_s = flags.maxReplicationLagS;
  if (flags.replica) stop.replica = flags.replica;
  if (flags.maxLockWaitMs !== undefined) stop.max_lock_wait_ms = flags.maxLockWaitMs;
  if (flags.maxRowDiffRatio !== undefined) stop.max_row_diff_ratio = flags.maxRowDiffRatio;
  if (typeof flags.runWindow === 'string') {
    const [from = '', to = ''] = flags.runWindow.split('-');
    stop.no_run_window = { from, to };
  }
  if (flags.panicFile) stop.panic_file = flags.panicFile;
  return stop;
}

/** A run id that the same flags produce again, so a dry run and its execution share a plan. */
export function defaultRunId(job: string, from: string, to: string): string {
  return `bf-${job}-${from}_${to}`.replace(/[^A-Za-z0-9._:-]/g, '-');
}

export function planFromFlags(job: Job, flags: RunFlags): Plan {
  if (!flags.from || !flags.to) {
    const missing = !flags.from ? '--from' : '--to';
    throw new InputError(`${missing} is required: a backfill needs an explicit, closed range (--from inclusive, --to exclusive)`, {
      field: missing,
      hint: 'e.g. --from 2026-05-01 --to 2026-07-01',
    });
  }
  const raw = {
    request_id: flags.runId ?? defaultRunId(job.name, flags.from, flags.to),
    reason: flags.reason ?? '',
    job: job.name,
    range: { from: flags.from, to: flags.to },
    ...(flags.unit ? { unit: flags.unit } : {}),
    write_mode: flags.mode ?? job.write_mode,
    throttle: { sleep_ms: flags.sleepMs ?? 0, concurrency: flags.concurrency ?? 1 },
    stop: stopFromFlags(flags),
    requested_by: flags.requestedBy ?? currentUser(),
  };
  const parsed = planSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join('.') ?? '';
    const flag = FLAG_OF_FIELD[field] ?? field;
    const value = issue ? issue.path.reduce<unknown>((v, k) => (v as Record<PropertyKey, unknown> | undefined)?.[k], raw) : undefined;
    throw new InputError(`${flag} ${showValue(value)}: ${issue?.message ?? 'invalid'}`, { field: flag, value });
  }
  return parsed.data;
}

/** With --plan FILE, flags may repeat the plan but never contradict it. */
export function checkFlagsAgainstPlan(plan: Plan, flags: RunFlags, planFile: string): void {
  const pairs: [string, unknown, unknown][] = [
    ['--from', flags.from, plan.range.from],
    ['--to', flags.to, plan.range.to],
    ['--unit', flags.unit, plan.unit],
    ['--mode', flags.mode, plan.write_mode],
    ['--sleep-ms', flags.sleepMs, plan.throttle.sleep_ms],
    ['--concurrency', flags.concurrency, plan.throttle.concurrency],
    ['--run-id', flags.runId, plan.request_id],
  ];
  for (const [flag, given, inPlan] of pairs) {
    if (given !== undefined && given !== inPlan) {
      throw new InputError(`${flag} ${showValue(given)} contradicts the plan (${showValue(inPlan)}): edit the plan or drop the flag`, {
        file: planFile,
        field: flag,
        value: given,
      });
    }
  }
}

function currentUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}
