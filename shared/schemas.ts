// The files users write (docs/design.md §4): connections config, jobs and plans.
// Objects are strict, so a misspelt field is an error rather than a silently ignored setting.
// Defaults use .prefault so nested defaults apply: an omitted `throttle` equals `throttle: {}`,
// which matters because a plan's hash is taken after defaults are filled in.
import './zodConfig.ts';
import { z } from 'zod';
import { showValue } from './errors.ts';
import { s3KeyProblem } from './s3Keys.ts';
import { envNameSchema, headersEnvSchema } from './envName.ts';
import { notifySchema } from './notifyConfig.ts';

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

/** Zones Intl accepted in this process: building a formatter loads ICU's zone data (15–30 ms the first time). */
const knownZones = new Set(['UTC']);

/** True when Intl knows the zone (IANA names, case-insensitive, and their aliases). */
export function isTimeZone(timeZone: string): boolean {
  if (knownZones.has(timeZone)) return true;
  if (timeZone.trim() === '') return false;
  try {
    new Intl.DateTimeFormat(undefined, { timeZone });
  } catch {
    return false;
  }
  knownZones.add(timeZone);
  return true;
}

export const timeZoneSchema = z.string().superRefine((zone, ctx) => {
  if (!isTimeZone(zone)) {
    ctx.addIssue({
      code: 'custom',
      message: `unknown time zone ${showValue(zone)}: use an IANA name like UTC, Asia/Seoul or America/New_York`,
    });
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
  /** send requests unsigned, like `aws s3 --no-sign-request`: public buckets, the sandbox's local S3 */
  no_sign_request: z.boolean().default(false),
});
export type S3Connection = z.output<typeof s3ConnectionSchema>;

export const connectionSchema = z.discriminatedUnion('kind', [postgresConnectionSchema, s3ConnectionSchema]);
export type Connection = z.output<typeof connectionSchema>;

const rangeSchema = z.strictObject({ from: text, to: text });

/**
 * Partitions a job's target must not be overwritten in (an invoiced billing period, a month
 * already reported): a fixed range, or a read-only SELECT whose first column lists closed
 * partition keys (dates or timestamps), :range_start and :range_end bound to the plan's range.
 */
const closedRuleShape = {
  reason: text,
  range: rangeSchema.optional(),
  probe: text.optional(),
  /** the probe's connection (default: the job's target) */
  connection: connectionNameSchema.optional(),
};

function checkClosedRule(rule: { range?: unknown; probe?: unknown; connection?: unknown }, ctx: z.core.$RefinementCtx): void {
  if ((rule.range === undefined) === (rule.probe === undefined))
    ctx.addIssue({
      code: 'custom',
      message: 'give either range: { from, to } or probe: (a SELECT listing closed partition keys), not both',
    });
  if (rule.connection !== undefined && rule.probe === undefined)
    ctx.addIssue({ code: 'custom', path: ['connection'], message: 'connection applies to a probe; a range needs none' });
}

export const closedRuleSchema = z.strictObject(closedRuleShape).superRefine(checkClosedRule);
export type ClosedRule = z.output<typeof closedRuleSchema>;

function workspaceClosedRuleSchema() {
  return z
    .strictObject({
      ...closedRuleShape,
      /** the targets it closes: Postgres tables as jobs name them (`mart.invoice_daily`) or S3 path templates */
      targets: z.array(text).min(1, 'name at least one target table or S3 path'),
    })
    .superRefine(checkClosedRule);
}
export type WorkspaceClosedRule = z.output<ReturnType<typeof workspaceClosedRuleSchema>>;

export const configSchema = z.strictObject({
  connections: z.record(connectionNameSchema, connectionSchema),
  /** The local SQLite ledger for this workspace, relative to the config file (else --db / the app's own). */
  ledger: z.string().min(1).optional(),
  /** Marks a training workspace: every screen and command says "Sandbox". */
  sandbox: z.boolean().default(false),
  /** Closed partitions of this workspace's targets (e.g. invoiced billing periods): overwriting them needs the plan to list them. */
  closed_partitions: z.array(workspaceClosedRuleSchema()).optional(),
  /** Who hears about runs: Slack and JSON webhooks, and for which events (shared/notifyConfig.ts). */
  notify: notifySchema.optional(),
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
    .strictObject({
      kind: z.literal('custom_sql'),
      name: text,
      sql: text,
      min: z.number().optional(),
      max: z.number().optional(),
      severity,
    })
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

// ---- job sources and targets: Postgres (the default shape) or S3 ----

/**
 * Placeholders an S3 path may use; each renders from the partition's key (local wall clock).
 * {yyyy} {mm} {dd} {hh} split {date} and {hour} for layouts such as `year=2026/month=07/…`.
 */
export const S3_PLACEHOLDERS = ['date', 'hour', 'partition', 'yyyy', 'mm', 'dd', 'hh'] as const;
export type S3Placeholder = (typeof S3_PLACEHOLDERS)[number];

/** `{date}` → 'date'; every `{…}` in a template, in order. */
export function templatePlaceholders(template: string): string[] {
  return [...template.matchAll(/\{([^{}]*)\}/g)].map((m) => m[1] ?? '');
}

const S3_PATH_HINT = 'e.g. "events-backfill/events-backfill_{date}_{hour}" or "refined/event/dt={date}/"';

/** The key of a partition inside the bucket, as a template; the bucket comes from the connection. */
const s3PathSchema = z.string().superRefine((path, ctx) => {
  const fail = (message: string) => ctx.addIssue({ code: 'custom', message });
  if (path.trim() === '') return fail(`must not be empty: give the partition's key template, ${S3_PATH_HINT}`);
  if (/^s3:\/\//i.test(path))
    return fail(`${showValue(path)} is a URL: give the key inside the bucket (the bucket comes from the connection), ${S3_PATH_HINT}`);
  if (path.startsWith('/')) return fail(`${showValue(path)} starts with "/": S3 keys do not, so nothing would ever match`);
  const unknown = templatePlaceholders(path).filter((p) => !(S3_PLACEHOLDERS as readonly string[]).includes(p));
  if (unknown.length > 0) {
    return fail(
      `${showValue(path)} uses {${unknown[0]}}, which is not a placeholder: use {date}, {hour}, {yyyy}, {mm}, {dd}, {hh} or {partition}, and write fixed names (a project id) literally`,
    );
  }
  if (/[{}]/.test(path.replace(/\{[^{}]*\}/g, ''))) return fail(`${showValue(path)} has an unmatched "{" or "}"`);
  const problem = s3KeyProblem(path);
  if (problem !== undefined) return fail(`${showValue(path)} ${problem}; write the key in its plain form, ${S3_PATH_HINT}`);
});

/** A fixed key prefix such as "events/" — a "folder" another reader lists. */
const s3PrefixSchema = z.string().superRefine((prefix, ctx) => {
  if (prefix === '' || prefix.startsWith('/') || /^s3:\/\//i.test(prefix)) {
    ctx.addIssue({
      code: 'custom',
      message: `${showValue(prefix)} is not a key prefix: write it like "events/" (inside the bucket, ending in "/")`,
    });
  } else if (/[{}]/.test(prefix)) {
    ctx.addIssue({ code: 'custom', message: `${showValue(prefix)} has placeholders: a prefix is fixed (write a project id literally)` });
  } else if (s3KeyProblem(prefix) !== undefined) {
    ctx.addIssue({
      code: 'custom',
      message: `${showValue(prefix)} ${s3KeyProblem(prefix) ?? ''}; write the prefix in its plain form, like "events/"`,
    });
  } else if (!prefix.endsWith('/')) {
    ctx.addIssue({
      code: 'custom',
      message: `${showValue(prefix)} must end with "/": a reader listing "${prefix}" would also see "${prefix}-backfill/…"`,
    });
  }
});

const s3Location = {
  kind: z.literal('s3'),
  connection: connectionNameSchema,
  /** The partition's key stem: its data objects start with it, its manifest is `<stem>_complete`. */
  path: s3PathSchema,
  /** The automated pipeline's prefix (its daily ETL lists it): a backfill never writes raw data there. */
  prefix: s3PrefixSchema.optional(),
  /** The prefix kept for data recovered by hand, beside the automated one (docs/design.md §1, seed 000). */
  backfill_prefix: s3PrefixSchema.optional(),
  /** How the partition's objects are encoded. */
  format: z.enum(['jsonl', 'csv', 'parquet']).default('jsonl'),
  /** Text formats only (Parquet compresses inside, see parquet.codec). Left out on a source: from each key's .gz / .zst. */
  compression: z.enum(['none', 'gzip', 'zstd']).optional(),
  /** CSV only: the header line, the delimiter and the quoting. */
  csv: z
    .strictObject({
      header: z.boolean().default(true),
      delimiter: z.string().length(1, 'must be one character, e.g. "," or ";" or "\\t"').default(','),
      quote: z.string().length(1, 'must be one character').default('"'),
      escape: z.string().length(1, 'must be one character').default('"'),
    })
    .optional(),
};

export type S3Format = 'jsonl' | 'csv' | 'parquet';
export type S3Compression = 'none' | 'gzip' | 'zstd';

/** The format-specific fields must match the format: no csv: block on Parquet, no compression on Parquet. */
function checkFormat(
  location: { format: S3Format; compression?: S3Compression; csv?: unknown; gzip?: boolean },
  ctx: z.core.$RefinementCtx,
) {
  if (location.csv !== undefined && location.format !== 'csv')
    ctx.addIssue({ code: 'custom', path: ['csv'], message: `csv options apply to format: csv, but the format is ${location.format}` });
  if (location.format === 'parquet' && (location.compression !== undefined || location.gzip !== undefined))
    ctx.addIssue({
      code: 'custom',
      path: [location.compression !== undefined ? 'compression' : 'gzip'],
      message: 'Parquet compresses inside the file: leave compression and gzip out and set parquet.codec on a target instead',
    });
  if (location.gzip !== undefined && location.compression !== undefined)
    ctx.addIssue({ code: 'custom', path: ['gzip'], message: 'give compression or gzip, not both (gzip: true is compression: gzip)' });
}

/** The literal text before the first placeholder: every rendered path starts with it. */
export function literalHead(template: string): string {
  const brace = template.indexOf('{');
  return brace === -1 ? template : template.slice(0, brace);
}

function checkPrefixes(
  location: { path: string; prefix?: string; backfill_prefix?: string },
  ctx: z.core.$RefinementCtx,
  isTarget: boolean,
): void {
  const { prefix, backfill_prefix: backfill } = location;
  if (prefix !== undefined && backfill !== undefined && (prefix.startsWith(backfill) || backfill.startsWith(prefix))) {
    ctx.addIssue({
      code: 'custom',
      path: ['backfill_prefix'],
      message: `${showValue(backfill)} overlaps the automated prefix ${showValue(prefix)}: a reader listing one would see the other's objects; use a sibling such as ${showValue(`${prefix.slice(0, -1)}-backfill/`)}`,
    });
    return;
  }
  const head = literalHead(location.path);
  // Under the automated prefix is the gate's to refuse (exit 4, naming the prefix to use); anywhere
  // else but the declared backfill prefix is a mistake in the file.
  if (isTarget && backfill !== undefined && !head.startsWith(backfill) && !(prefix !== undefined && head.startsWith(prefix))) {
    ctx.addIssue({
      code: 'custom',
      path: ['path'],
      message: `${showValue(location.path)} is not under backfill_prefix ${showValue(backfill)}: start it with ${showValue(backfill)}`,
    });
  }
}

export const postgresSourceSchema = z.strictObject({
  kind: z.literal('postgres').optional(),
  connection: connectionNameSchema,
  query: text,
});
export type PostgresSource = z.output<typeof postgresSourceSchema>;

export const s3SourceSchema = z
  .strictObject({
    ...s3Location,
    /** Gunzip the objects; left out, each object is gunzipped when its name ends in .gz. */
    gzip: z.boolean().optional(),
    /** Read a partition only once its `_complete` marker exists (a writer may still be adding objects). */
    require_complete: z.boolean().default(true),
    /**
     * DuckDB SQL over the relation `source` (the partition's objects); :partition_start,
     * :partition_end and :run_id are bound as parameters. One read-only SELECT: it cannot
     * read or write any file but the partition's own objects.
     */
    query: text.optional(),
  })
  .superRefine((source, ctx) => {
    checkPrefixes(source, ctx, false);
    checkFormat(source, ctx);
  });
export type S3Source = z.output<typeof s3SourceSchema>;

export const postgresTargetSchema = z.strictObject({
  kind: z.literal('postgres').optional(),
  connection: connectionNameSchema,
  table: text,
  partition_column: text,
  key: z.array(text).default([]),
});
export type PostgresTarget = z.output<typeof postgresTargetSchema>;

export const s3TargetSchema = z
  .strictObject({
    ...s3Location,
    /** Legacy spelling of compression (left out: gzip for text formats). */
    gzip: z.boolean().optional(),
    /** A partition is split into objects of at most this many records. */
    records_per_object: z.number().int().min(1).max(100_000_000).default(1_000_000),
    parquet: z
      .strictObject({
        codec: z.enum(['zstd', 'snappy', 'gzip', 'uncompressed']).default('zstd'),
        row_group_size: z.number().int().min(1024).max(10_000_000).default(122_880),
      })
      .optional(),
    /** Objects this job wrote under its backfill prefix may be removed after this many days (`run-backfill lake tidy`). */
    backfill_retention_days: z.number().int().min(1).max(36_500).optional(),
  })
  .superRefine((target, ctx) => {
    checkPrefixes(target, ctx, true);
    checkFormat(target, ctx);
    if (target.parquet !== undefined && target.format !== 'parquet')
      ctx.addIssue({
        code: 'custom',
        path: ['parquet'],
        message: `parquet options apply to format: parquet, but the format is ${target.format}`,
      });
    if (target.backfill_retention_days !== undefined && target.backfill_prefix === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['backfill_retention_days'],
        message:
          'a retention applies to what the job wrote under its backfill prefix: declare backfill_prefix (and prefix, the automated one it never touches)',
      });
  });
export type S3Target = z.output<typeof s3TargetSchema>;

// `kind` may be left out for Postgres, so job files written before S3 existed stay valid and
// hash the same.
const jobSourceSchema = z.discriminatedUnion('kind', [postgresSourceSchema, s3SourceSchema]);
const jobTargetSchema = z.discriminatedUnion('kind', [postgresTargetSchema, s3TargetSchema]);

/**
 * What S3 sides of a validation rule may say: "records" (the partition's record count), or a
 * read-only DuckDB SELECT over the relation `source` (source side) or `target` (the staged
 * output, target side).
 */
export const S3_RULE_MEASURE = 'records';

function checkJobSides(job: z.output<typeof jobObjectSchema>, ctx: z.core.$RefinementCtx): void {
  for (const side of ['source', 'target'] as const) {
    const location = job[side];
    if (location.kind !== 's3') continue;
    const used = templatePlaceholders(location.path);
    const has = (p: S3Placeholder) => used.includes(p);
    const hourly = has('hour') || has('hh');
    // a date is {date}, or {yyyy} and {mm} (and {dd} below a month)
    const dated = has('date') || (has('yyyy') && has('mm') && (job.unit === 'month' || has('dd')));
    const fail = (message: string) => ctx.addIssue({ code: 'custom', path: [side, 'path'], message });
    if (hourly && job.unit !== 'hour') {
      fail(
        `uses {${has('hour') ? 'hour' : 'hh'}} but the job's unit is ${job.unit}: a ${job.unit === 'day' ? 'daily' : 'monthly'} partition has no single hour`,
      );
    } else if (has('dd') && job.unit === 'month') {
      fail(`uses {dd} but the job's unit is month: a monthly partition has no single day`);
    } else if (!has('partition') && !dated) {
      fail(
        `${showValue(location.path)} has neither {date} (nor {yyyy}, {mm}${job.unit === 'month' ? '' : ' and {dd}'}) nor {partition}: every partition would share one location`,
      );
    } else if (job.unit === 'hour' && !has('partition') && !hourly) {
      fail(`${showValue(location.path)} has {date} but not {hour}: the 24 hourly partitions of a day would share one location`);
    }
  }
  if (job.target.kind === 's3' && job.write_mode !== 'overwrite-partition') {
    ctx.addIssue({
      code: 'custom',
      path: ['write_mode'],
      message: `${job.write_mode} cannot apply to an S3 target: its partitions are replaced whole (a new manifest swaps them atomically); use overwrite-partition`,
    });
  }
  if (job.source.kind === 's3' && job.quality.length > 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['quality'],
      message:
        'quality rules run SQL on a Postgres source; this job reads S3 objects: remove them (records are validated as they are read)',
    });
  }
}

const jobObjectSchema = z.strictObject({
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
  source: jobSourceSchema,
  target: jobTargetSchema,
  write_mode: writeModeSchema,
  validation: z.array(validationRuleSchema).default([]),
  quality: z.array(qualityRuleSchema).default([]),
  // Optional without defaults, so job files written before them keep their hash.
  /** personal-data retention: partitions older than `days` are refused (recomputing them would restore deleted data) */
  retention: z.strictObject({ days: z.number().int().min(1).max(36_500), reason: text }).optional(),
  closed_partitions: z.array(closedRuleSchema).optional(),
  /** thresholds of the dry run's questions (shared/partitionFlags.ts has the defaults) */
  red_flags: z
    .strictObject({
      abnormal_size: z
        .strictObject({
          /** predicted rows this many times above or below the median of the neighbouring partitions */
          neighbour_ratio: z.number().gt(1).optional(),
          /** predicted rows this many times what the target holds now */
          target_ratio: z.number().gt(1).optional(),
          /** partitions smaller than this (on both sides of a comparison) are never abnormal */
          min_rows: z.number().int().min(0).optional(),
        })
        .optional(),
      source_gone: z
        .strictObject({
          /** the source is "no longer there" when it gives back fewer than this share of the rows the target holds */
          min_ratio: z.number().gt(0).max(1).optional(),
        })
        .optional(),
    })
    .optional(),
});
export const jobSchema = jobObjectSchema.superRefine(checkJobSides);
export type Job = z.output<typeof jobSchema>;
export type JobInput = z.input<typeof jobSchema>;

/** A job whose source and target are both Postgres: what the Postgres partition target runs. */
export type PostgresJob = Job & { source: PostgresSource; target: PostgresTarget };

export function isPostgresJob(job: Job): job is PostgresJob {
  return job.source.kind !== 's3' && job.target.kind !== 's3';
}

/** Narrows a job built in code (benchmarks, tests) to Postgres on both sides, or throws. */
export function asPostgresJob(job: Job): PostgresJob {
  if (!isPostgresJob(job)) throw new Error(`job ${job.name} has an S3 source or target, not Postgres on both sides`);
  return job;
}

// ---- stop conditions: signals with a throttle level and a critical level ----
//
// New fields are optional without defaults (defaults apply where they are used): a plan's hash
// is taken after defaults are filled in, so a default here would change the hash of every plan
// signed before the field existed.

const HTTP_URL_HINT = 'e.g. "http://prometheus.internal:9090"';

/** An http(s) URL without credentials in it: tokens come from environment variables (or the app's secret store). */
export const probeUrlSchema = z.string().superRefine((url, ctx) => {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    ctx.addIssue({ code: 'custom', message: `${showValue(url)} is not a URL, ${HTTP_URL_HINT}` });
    return;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    ctx.addIssue({ code: 'custom', message: `${showValue(url)} must start with http:// or https://, ${HTTP_URL_HINT}` });
  else if (parsed.username !== '' || parsed.password !== '')
    ctx.addIssue({
      code: 'custom',
      message: `${showValue(redactUrl(url))} holds credentials: remove them and name an environment variable in bearer_token_env or headers_env`,
    });
});

const probeCommon = {
  name: text,
  /** the throttle level: while the value is above it the run waits, then continues by itself */
  max: z.number(),
  /** the critical level: above it the run halts at once, rolling back the partition in flight */
  critical: z.number().optional(),
};

const httpAuth = {
  /** sent as `Authorization: Bearer <value of this variable>` */
  bearer_token_env: envNameSchema.optional(),
  /** header name → the environment variable holding its value (API keys) */
  headers_env: headersEnvSchema.optional(),
  timeout_ms: z.number().int().min(100).max(60_000).optional(),
};

export const probeSchema = z.discriminatedUnion('kind', [
  // `kind` may be left out: plans written before the other kinds stay valid and hash the same.
  z.strictObject({ kind: z.literal('sql').optional(), ...probeCommon, sql: text, connection: connectionNameSchema.optional() }),
  /** an instant PromQL query; the largest value of the result is the reading */
  z.strictObject({ kind: z.literal('prometheus'), ...probeCommon, url: probeUrlSchema, query: text, ...httpAuth }),
  /** a JSON document and the path to a number in it: `status.totallag`, `partitions[0].lag` */
  z.strictObject({
    kind: z.literal('http'),
    ...probeCommon,
    url: probeUrlSchema,
    path: z
      .string()
      .regex(/^[A-Za-z0-9_$-]+(\[\d+\])*(\.[A-Za-z0-9_$-]+(\[\d+\])*)*$/, 'must be a path like status.totallag or items[0].lag'),
    ...httpAuth,
  }),
  /** VACUUM (autovacuum or manual) in progress on the target table, from pg_stat_progress_vacuum: 0 or 1 */
  z.strictObject({
    kind: z.literal('autovacuum'),
    name: text.optional(),
    max: z.number().optional(),
    critical: z.number().optional(),
    connection: connectionNameSchema.optional(),
  }),
]);
export type Probe = z.output<typeof probeSchema>;
export type ProbeKind = NonNullable<Probe['kind']>;

/** Above critical, the run halts; above max it throttles first. critical below max would never throttle. */
function checkLevels(
  max: number | undefined,
  critical: number | undefined,
  ctx: z.core.$RefinementCtx,
  path: (string | number)[],
  names: [string, string],
): void {
  if (max !== undefined && critical !== undefined && critical < max)
    ctx.addIssue({
      code: 'custom',
      path,
      message: `${names[1]} ${critical} is below ${names[0]} ${max}: the run throttles above ${names[0]} and halts above ${names[1]}, so make ${names[1]} the larger`,
    });
}

export const stopSchema = z
  .strictObject({
    /** throttle level: replicas this far behind make the run wait */
    max_replication_lag_s: z.number().positive().optional(),
    /** critical level: replicas this far behind halt the run at once */
    critical_replication_lag_s: z.number().positive().optional(),
    max_lock_wait_ms: positiveInt.optional(),
    critical_lock_wait_ms: positiveInt.optional(),
    max_consecutive_failures: z.number().int().min(1).default(3),
    max_row_diff_ratio: z.number().positive().optional(),
    /** a connection to a read replica whose replay lag is watched (else pg_stat_replication on the target) */
    replica: connectionNameSchema.optional(),
    /** local wall-clock hours when backfills must not run, e.g. { from: '09:00', to: '18:00' } */
    no_run_window: z
      .strictObject({
        from: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'HH:MM'),
        to: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'HH:MM'),
        timezone: timeZoneSchema.optional(),
      })
      .optional(),
    /** a file whose existence stops the run at once (the partition in flight rolls back) */
    panic_file: z.string().min(1).optional(),
    /** more signals: SQL, Prometheus, an HTTP JSON endpoint, autovacuum on the target table */
    probes: z.array(probeSchema).default([]),
    /** how often the signals are measured */
    check_interval_ms: z.number().int().min(100).default(1000),
    /** halt when throttled continuously this long (default 1800: 30 minutes) */
    max_throttle_s: z.number().positive().optional(),
    /** every signal must stay under its level this long before a throttled run continues (default 3 × check_interval_ms) */
    settle_ms: z.number().int().min(0).max(3_600_000).optional(),
  })
  .superRefine((stop, ctx) => {
    checkLevels(
      stop.max_replication_lag_s,
      stop.critical_replication_lag_s,
      ctx,
      ['critical_replication_lag_s'],
      ['max_replication_lag_s', 'critical_replication_lag_s'],
    );
    checkLevels(
      stop.max_lock_wait_ms,
      stop.critical_lock_wait_ms,
      ctx,
      ['critical_lock_wait_ms'],
      ['max_lock_wait_ms', 'critical_lock_wait_ms'],
    );
    const names = new Set<string>();
    stop.probes.forEach((p, i) => {
      checkLevels(p.max, p.critical, ctx, ['probes', i, 'critical'], ['max', 'critical']);
      const name = probeName(p);
      if (names.has(name))
        ctx.addIssue({
          code: 'custom',
          path: ['probes', i, 'name'],
          message: `probe name ${showValue(name)} is used twice: each signal needs its own name`,
        });
      names.add(name);
    });
  });
export type StopSettings = z.output<typeof stopSchema>;

/** A probe's name as the run reports it (an autovacuum probe may leave it out). */
export function probeName(p: Probe): string {
  return p.name ?? (p.kind === 'autovacuum' ? 'autovacuum' : '');
}

/** Defaults of fields kept optional for the plan hash's sake (see above). */
export const THROTTLE_DEFAULTS = { maxThrottleS: 1800, settleIntervals: 3 } as const;

export const REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export const planSchema = z.strictObject({
  request_id: z.string().regex(REQUEST_ID, 'must be letters, digits, ".", "_", ":" or "-" (at most 128), starting with a letter or digit'),
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
      /** work at most this share of wall time: after a partition of d ms, pause d × (1 − F) / F (at least sleep_ms) */
      duty_cycle: z.number().gt(0, 'must be above 0 (0 would never work)').max(1, 'must be at most 1 (1: no pause)').optional(),
    })
    .prefault({}),
  stop: stopSchema.prefault({}),
  owner: z.string().optional(),
  requested_by: z.string().optional(),
  // Optional without defaults, so plans written before them keep their hash (and signatures).
  /** run the first N partitions, reconcile and compare them, then hold in `canary` (default: 1 for the manual tier, else 0) */
  canary: z.number().int().min(0).max(1000).optional(),
  /** partitions whose source is gone (purged) that the run may overwrite anyway: their rows are deleted */
  accept_purged: z.array(text).optional(),
  /** closed partitions (job or workspace closed_partitions) the run may overwrite: needs a lead's sign-off in every tier */
  overwrite_closed: z.array(text).optional(),
  /** flags the requester has looked at and explains, shown to the lead: they warn instead of blocking */
  acknowledge: z
    .array(
      z.strictObject({
        flag: z.enum(['abnormal-size', 'peak-overlap', 'same-code']),
        reason: text,
        /** the partitions it covers (default: all) */
        partitions: z.array(text).optional(),
      }),
    )
    .optional(),
});
export type Plan = z.output<typeof planSchema>;
export type PlanInput = z.input<typeof planSchema>;
