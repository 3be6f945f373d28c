/**
 * The one table of flags that set plan fields. Commander's options, the plan built from flags,
 * the check of flags against a `--plan` file and the retune of a resume all come from it, so a
 * new plan flag is one line here. Kept free of heavy imports: `run-backfill --help` and the
 * fast commands load it.
 */
import { Option } from 'commander';
import { integer, number } from './program.ts';

export interface PlanFlag {
  /** commander's flags, e.g. '--sleep-ms <ms>' */
  flags: string;
  /** the plan field it sets (dotted path) */
  field: string;
  description: string;
  parse?: (text: string) => unknown;
  choices?: readonly string[];
  /** the plan value from what commander parsed, or undefined when the flag was not given */
  toPlan?: (parsed: unknown) => unknown;
}

/** `09:00-18:00` → { from, to }. **Hazard**: commander reads `--no-run-window` as a negation of `runWindow`, true when absent. */
const window = (parsed: unknown): unknown => {
  if (typeof parsed !== 'string') return undefined;
  const [from = '', to = ''] = parsed.split('-');
  return { from, to };
};

/** `2026-05-03,2026-05-04` → ['2026-05-03', '2026-05-04']: partition keys as the dry run lists them. */
const keyList = (text: string): string[] =>
  text
    .split(',')
    .map((k) => k.trim())
    .filter((k) => k !== '');

/** `same-code:the rows were edited by hand` → [{ flag, reason }]; the schema checks the flag's name. */
const acknowledgement = (text: string): { flag: string; reason: string }[] => {
  const at = text.indexOf(':');
  return [{ flag: at < 0 ? text.trim() : text.slice(0, at).trim(), reason: at < 0 ? '' : text.slice(at + 1).trim() }];
};

export const PLAN_FLAGS: readonly PlanFlag[] = [
  { flags: '--run-id <id>', field: 'request_id', description: 'the run (and request) id; default derived from job and range' },
  { flags: '--from <date>', field: 'range.from', description: 'first partition, inclusive (e.g. 2026-05-01)' },
  { flags: '--to <date>', field: 'range.to', description: 'end of the range, exclusive (e.g. 2026-07-01)' },
  { flags: '--unit <unit>', field: 'unit', description: 'partition unit; must match the job', choices: ['hour', 'day', 'month'] },
  {
    flags: '--mode <mode>',
    field: 'write_mode',
    description: "write mode (default: the job's)",
    choices: ['overwrite-partition', 'upsert', 'append-dedupe'],
  },
  { flags: '--sleep-ms <ms>', field: 'throttle.sleep_ms', description: 'pause between partitions', parse: integer(0, 86_400_000) },
  {
    flags: '--concurrency <n>',
    field: 'throttle.concurrency',
    description: 'partitions written at once (default 1)',
    parse: integer(1, 16),
  },
  {
    flags: '--duty-cycle <f>',
    field: 'throttle.duty_cycle',
    description: 'work at most this share of wall time (0 < f ≤ 1): pause after each partition in proportion to its duration',
    parse: number(0.001, 1),
  },
  {
    flags: '--max-consecutive-failures <n>',
    field: 'stop.max_consecutive_failures',
    description: 'halt after this many failures in a row (default 3)',
    parse: integer(1, 1000),
  },
  {
    flags: '--max-replication-lag-s <s>',
    field: 'stop.max_replication_lag_s',
    description: 'throttle (wait, then continue) while replicas are this far behind',
    parse: number(0.001),
  },
  {
    flags: '--critical-replication-lag-s <s>',
    field: 'stop.critical_replication_lag_s',
    description: 'halt at once (rolling back the partition in flight) when replicas are this far behind',
    parse: number(0.001),
  },
  {
    flags: '--replica <connection>',
    field: 'stop.replica',
    description: 'watch this replica connection for lag (else pg_stat_replication on the target)',
  },
  {
    flags: '--max-lock-wait-ms <ms>',
    field: 'stop.max_lock_wait_ms',
    description: "throttle while sessions wait this long behind the backfill's locks; also its lock_timeout",
    parse: integer(1),
  },
  {
    flags: '--critical-lock-wait-ms <ms>',
    field: 'stop.critical_lock_wait_ms',
    description: "halt at once (rolling back the partition in flight) when sessions wait this long behind the backfill's locks",
    parse: integer(1),
  },
  {
    flags: '--max-throttle-s <s>',
    field: 'stop.max_throttle_s',
    description: 'halt when throttled continuously for longer than this (default 1800)',
    parse: number(0.001),
  },
  {
    flags: '--settle-ms <ms>',
    field: 'stop.settle_ms',
    description: 'a throttled run continues once every signal has stayed under its level this long (default 3 check intervals)',
    parse: integer(0, 3_600_000),
  },
  {
    flags: '--check-interval-ms <ms>',
    field: 'stop.check_interval_ms',
    description: 'how often the signals are measured (default 1000)',
    parse: integer(100, 3_600_000),
  },
  {
    flags: '--max-row-diff-ratio <r>',
    field: 'stop.max_row_diff_ratio',
    description: "halt when a partition's rows differ this much from the dry run",
    parse: number(0.000001),
  },
  {
    flags: '--no-run-window <HH:MM-HH:MM>',
    field: 'stop.no_run_window',
    description: 'local hours when backfills must not run (peak hours)',
    toPlan: window,
  },
  { flags: '--panic-file <path>', field: 'stop.panic_file', description: 'stop at once when this file exists' },
  {
    flags: '--canary <n>',
    field: 'canary',
    description: 'run the first N partitions, reconcile and compare them, then wait for --resume (default 1 for the manual tier; 0: none)',
    parse: integer(0, 1000),
  },
  {
    flags: '--accept-purged <keys>',
    field: 'accept_purged',
    description: 'partitions whose source is gone to overwrite anyway, deleting their rows (comma-separated keys)',
    parse: keyList,
  },
  {
    flags: '--overwrite-closed <keys>',
    field: 'overwrite_closed',
    description: 'closed partitions to overwrite on purpose; a lead must sign off (comma-separated keys)',
    parse: keyList,
  },
  {
    flags: '--acknowledge <flag:reason>',
    field: 'acknowledge',
    description:
      'a red flag looked at and explained, e.g. "same-code:the rows were edited by hand" (abnormal-size, peak-overlap, same-code)',
    parse: acknowledgement,
  },
  { flags: '--reason <text>', field: 'reason', description: 'why this backfill is needed (kept with the plan)' },
  { flags: '--requested-by <name>', field: 'requested_by', description: 'who asked for it (default: you)' },
];

export function optionOf(flag: PlanFlag): Option {
  const option = new Option(flag.flags, flag.description);
  if (flag.choices) option.choices(flag.choices);
  if (flag.parse) option.argParser(flag.parse);
  return option;
}

/** `--sleep-ms <ms>` → `--sleep-ms` */
export const flagName = (flag: PlanFlag): string => flag.flags.split(' ')[0] ?? flag.flags;

/** The plan fields the given options set: [flag, field, value] for each flag that was given. */
export function givenPlanFlags(options: object): { name: string; field: string; value: unknown }[] {
  const given = [];
  for (const flag of PLAN_FLAGS) {
    const parsed = (options as Record<string, unknown>)[optionOf(flag).attributeName()];
    const value = flag.toPlan ? flag.toPlan(parsed) : parsed;
    if (value !== undefined) given.push({ name: flagName(flag), field: flag.field, value });
  }
  return given;
}

export const flagOfField = (field: string): string | undefined => {
  const flag = PLAN_FLAGS.find((f) => f.field === field || field.startsWith(`${f.field}.`));
  return flag ? flagName(flag) : undefined;
};
