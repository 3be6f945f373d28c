// The files users write (DESIGN §4): connections config, jobs and plans.
// Objects are strict, so a misspelt field is an error rather than a silently ignored setting.
// Defaults use .prefault so nested defaults apply: an omitted `throttle` equals `throttle: {}`,
// which matters because a plan's hash is taken after defaults are filled in.
import { z } from 'zod';
import { showValue } from './errors.ts';

export const unitSchema = z.enum(['hour', 'day', 'month']);
export type Unit = z.output<typeof unitSchema>;

export const writeModeSchema = z.enum(['overwrite-partition', 'upsert', 'append-dedupe']);
export type WriteMode = z.output<typeof writeModeSchema>;

export const severitySchema = z.enum(['warn', 'fail']);
export type Severity = z.output<typeof severitySchema>;

const text = z.string().min(1, 'must not be empty');
const positiveInt = z.number().int().positive();

export const JOB_NAME = /^[a-z0-9][a-z0-9._-]{0,99}$/;
export const jobNameSchema = z
  .string()
  .regex(JOB_NAME, 'must be lowercase letters, digits, ".", "_" or "-" (at most 100), starting with a letter or digit');

export const connectionNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'must be letters, digits, ".", "_" or "-" (at most 64), starting with a letter or digit');

/** True when Intl knows the zone (IANA names, case-insensitive, and their aliases). */
export function isTimeZone(timeZone: string): boolean {
  if (timeZone.trim() === '') return false;
  try {
    new Intl.DateTimeFormat(undefined, { timeZone });
    return true;
  } catch {
    return false;
  }
}

export const timeZoneSchema = z.string().superRefine((zone, ctx) => {
  if (!isTimeZone(zone)) {
    ctx.addIssue({ code: 'custom', message: `unknown time zone ${showValue(zone)}: use an IANA name like UTC, Asia/Seoul or America/New_York` });
  }
});

/** Hides a password in a connection URL before it goes into a message. */
export function redactUrl(url: string): string {
  // greedy up to the last '@' before the path, as URL parsers read it: a password may contain '@'
  return url.replace(/\/\/([^/@:]*):[^/]*@/, '//$1:***@').replace(/([?&]password=)[^&]*/i, '$1***');
}

const postgresUrlSchema = z.string().superRefine((url, ctx) => {
  const shown = showValue(redactUrl(url));
  if (!/^postgres(ql)?:\/\//i.test(url)) {
    ctx.addIssue({ code: 'custom', message: `must start with postgres:// or postgresql://, got ${shown}` });
    return;
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    ctx.addIssue({ code: 'custom', message: `is not a valid URL: ${shown}` });
    return;
  }
  if (parsed.password !== '' || parsed.searchParams.has('password')) {
    ctx.addIssue({
      code: 'custom',
      message: `contains a password (${shown}): remove it and set password_env to the name of an environment variable that holds it`,
    });
  }
});

export const postgresConnectionSchema = z.strictObject({
  kind: z.literal('postgres'),
  url: postgresUrlSchema,
  password_env: text.optional(),
  statement_timeout_ms: positiveInt.default(300_000),
  lock_timeout_ms: positiveInt.default(5_000),
  connect_timeout_ms: positiveInt.default(10_000),
});
export type PostgresConnection = z.output<typeof postgresConnectionSchema>;

export const s3ConnectionSchema = z.strictObject({
  kind: z.literal('s3'),
  bucket: text,
  region: text.default('us-east-1'),
  endpoint: z.url().optional(),
  force_path_style: z.boolean().default(false),
  access_key_id_env: text.optional(),
  secret_access_key_env: text.optional(),
});
export type S3Connection = z.output<typeof s3ConnectionSchema>;

export const connectionSchema = z.discriminatedUnion('kind', [postgresConnectionSchema, s3ConnectionSchema]);
export type Connection = z.output<typeof connectionSchema>;

export const configSchema = z.strictObject({
  connections: z.record(connectionNameSchema, connectionSchema),
  /** The local SQLite ledger for this workspace, relative to the config file (else --db / the app's own). */
  ledger: z.string().min(1).optional(),
  /** Marks a training workspace: every screen and command says "Sandbox". */
  sandbox: z.boolean().default(false),
});
export type Config = z.output<typeof configSchema>;

export const validationRuleSchema = z.strictObject({
  name: text,
  source: text,
  target: text,
  /** relative: |s - t| / max(|s|, 1) */
  tolerance: z.number().min(0).default(0),
});
export type ValidationRule = z.output<typeof validationRuleSchema>;

const severity = severitySchema.default('fail');

export const qualityRuleSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('null_rate'), table: text, column: text, time_column: text, max: z.number().min(0).max(1), severity }),
  // partition row count against the trailing median, both ways
  z.strictObject({
    kind: z.literal('row_count_outlier'),
    table: text,
    time_column: text,
    window: z.number().int().min(3).default(7),
    max_ratio: z.number().gt(1).default(3),
    severity,
  }),
  // rows where `after` < `before`, e.g. refunded_at < paid_at
  z.strictObject({
    kind: z.literal('timestamp_order'),
    table: text,
    before: text,
    after: text,
    time_column: text,
    max: z.number().min(0).default(0),
    severity,
  }),
  z.strictObject({ kind: z.literal('freshness'), table: text, time_column: text, max_age_minutes: z.number().positive(), severity }),
  z
    .strictObject({ kind: z.literal('custom_sql'), name: text, sql: text, min: z.number().optional(), max: z.number().optional(), severity })
    .superRefine((rule, ctx) => {
      if (rule.min === undefined && rule.max === undefined) {
        ctx.addIssue({ code: 'custom', message: 'custom_sql needs min, max or both: the bounds its single value must stay within' });
      } else if (rule.min !== undefined && rule.max !== undefined && rule.min > rule.max) {
        ctx.addIssue({ code: 'custom', path: ['min'], message: `min ${rule.min} is greater than max ${rule.max}` });
      }
    }),
]);
export type QualityRule = z.output<typeof qualityRuleSchema>;
export type QualityRuleKind = QualityRule['kind'];

export const jobSchema = z.strictObject({
  name: jobNameSchema,
  description: z.string().optional(),
  unit: unitSchema,
  timezone: timeZoneSchema.default('UTC'),
  classification: z
    .strictObject({
      billing: z.boolean().default(false),
      external_partner: z.boolean().default(false),
      downstream: z.array(text).default([]),
    })
    .prefault({}),
  source: z.strictObject({ connection: connectionNameSchema, query: text }),
  target: z.strictObject({
    connection: connectionNameSchema,
    table: text,
    partition_column: text,
    key: z.array(text).default([]),
  }),
  write_mode: writeModeSchema,
  validation: z.array(validationRuleSchema).default([]),
  quality: z.array(qualityRuleSchema).default([]),
});
export type Job = z.output<typeof jobSchema>;
export type JobInput = z.input<typeof jobSchema>;

export const REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export const planSchema = z.strictObject({
  request_id: z
    .string()
    .regex(REQUEST_ID, 'must be letters, digits, ".", "_", ":" or "-" (at most 128), starting with a letter or digit'),
  reason: z.string().default(''),
  job: jobNameSchema,
  // Any text here: a vague range ("last 3 months") is reported as a red flag, not a parse error.
  range: z.strictObject({ from: z.string(), to: z.string() }),
  unit: unitSchema.optional(),
  write_mode: writeModeSchema,
  throttle: z
    .strictObject({
      sleep_ms: z.number().int().min(0).default(0),
      concurrency: z.number().int().min(1).max(16).default(1),
    })
    .prefault({}),
  stop: z
    .strictObject({
      max_replication_lag_s: z.number().positive().optional(),
      max_lock_wait_ms: positiveInt.optional(),
      max_consecutive_failures: z.number().int().min(1).default(3),
      max_row_diff_ratio: z.number().positive().optional(),
    })
    .prefault({}),
  owner: z.string().optional(),
  requested_by: z.string().optional(),
});
export type Plan = z.output<typeof planSchema>;
export type PlanInput = z.input<typeof planSchema>;
