import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { configSchema, isTimeZone, jobSchema, planSchema, qualityRuleSchema, redactUrl } from '../../shared/schemas.ts';

const minimalJob = {
  name: 'order-daily-mart',
  unit: 'day',
  source: { connection: 'warehouse', query: 'select 1' },
  target: { connection: 'warehouse', table: 'mart.t', partition_column: 'order_date' },
  write_mode: 'overwrite-partition',
};
const minimalPlan = { request_id: 'bf-1', job: 'order-daily-mart', range: { from: '2026-05-01', to: '2026-06-01' }, write_mode: 'upsert' };

/** The first issue as "path: message", or 'ok'. */
function firstIssue(schema: z.ZodType, input: unknown): string {
  const result = schema.safeParse(input);
  if (result.success) return 'ok';
  const issue = result.error.issues[0];
  return `${issue?.path.join('.')}: ${issue?.code}: ${issue?.message}`;
}

describe('jobSchema', () => {
  it('fills in defaults', () => {
    expect(jobSchema.parse(minimalJob)).toEqual({
      ...minimalJob,
      timezone: 'UTC',
      classification: { billing: false, external_partner: false, downstream: [] },
      target: { ...minimalJob.target, key: [] },
      validation: [],
      quality: [],
    });
  });

  const cases: { name: string; change: Record<string, unknown>; issue: string }[] = [
    { name: 'a good job', change: { timezone: 'Asia/Seoul', classification: { billing: true } }, issue: 'ok' },
    {
      name: 'unit of the wrong kind',
      change: { unit: 'week' },
      issue: 'unit: invalid_value: Invalid option: expected one of "hour"|"day"|"month"',
    },
    {
      name: 'bad write mode',
      change: { write_mode: 'merge' },
      issue: 'write_mode: invalid_value: Invalid option: expected one of "overwrite-partition"|"upsert"|"append-dedupe"',
    },
    { name: 'unknown field', change: { tabel: 'x' }, issue: ': unrecognized_keys: Unrecognized key: "tabel"' },
    {
      name: 'unknown nested field',
      change: { classification: { biling: true } },
      issue: 'classification: unrecognized_keys: Unrecognized key: "biling"',
    },
    {
      name: 'key of the wrong type',
      change: { target: { ...minimalJob.target, key: ['a', 42] } },
      issue: 'target.key.1: invalid_type: Invalid input: expected string, received number',
    },
    {
      name: 'billing as text',
      change: { classification: { billing: 'yes' } },
      issue: 'classification.billing: invalid_type: Invalid input: expected boolean, received string',
    },
    {
      name: 'unknown zone',
      change: { timezone: 'Asia/Seol' },
      issue: 'timezone: custom: unknown time zone "Asia/Seol": use an IANA name like UTC, Asia/Seoul or America/New_York',
    },
    {
      name: 'empty zone',
      change: { timezone: '' },
      issue: 'timezone: custom: unknown time zone "": use an IANA name like UTC, Asia/Seoul or America/New_York',
    },
    {
      name: 'upper case name',
      change: { name: 'Order' },
      issue: 'name: invalid_format: must be lowercase letters, digits, ".", "_" or "-" (at most 100), starting with a letter or digit',
    },
    {
      name: 'hostile name',
      change: { name: 'x"; drop table t;--' },
      issue: 'name: invalid_format: must be lowercase letters, digits, ".", "_" or "-" (at most 100), starting with a letter or digit',
    },
    {
      name: 'empty query',
      change: { source: { connection: 'warehouse', query: '' } },
      issue: 'source.query: too_small: must not be empty',
    },
    {
      name: 'negative tolerance',
      change: { validation: [{ name: 'v', source: 's', target: 't', tolerance: -1 }] },
      issue: 'validation.0.tolerance: too_small: Too small: expected number to be >=0',
    },
    {
      name: 'unknown quality kind',
      change: { quality: [{ kind: 'nul_rate' }] },
      issue:
        "quality.0.kind: invalid_union: Invalid discriminator value. Expected 'null_rate' | 'row_count_outlier' | 'timestamp_order' | 'freshness' | 'custom_sql'",
    },
  ];
  it.each(cases)('$name', ({ change, issue }) => {
    expect(firstIssue(jobSchema, { ...minimalJob, ...change })).toBe(issue);
  });
});

describe('qualityRuleSchema', () => {
  const cases: { rule: Record<string, unknown>; result: unknown }[] = [
    {
      rule: { kind: 'null_rate', table: 'orders', column: 'customer_id', time_column: 'paid_at', max: 0.01 },
      result: { severity: 'fail' },
    },
    { rule: { kind: 'row_count_outlier', table: 'orders', time_column: 'paid_at' }, result: { window: 7, max_ratio: 3, severity: 'fail' } },
    {
      rule: { kind: 'timestamp_order', table: 'orders', before: 'paid_at', after: 'refunded_at', time_column: 'paid_at', severity: 'warn' },
      result: { max: 0, severity: 'warn' },
    },
    { rule: { kind: 'freshness', table: 'orders', time_column: 'paid_at', max_age_minutes: 90 }, result: { severity: 'fail' } },
    { rule: { kind: 'custom_sql', name: 'c', sql: 'select 1', min: 1 }, result: { min: 1, severity: 'fail' } },
    {
      rule: { kind: 'null_rate', table: 'orders', column: 'c', time_column: 't', max: 1.5 },
      result: 'max: too_big: Too big: expected number to be <=1',
    },
    {
      rule: { kind: 'row_count_outlier', table: 'o', time_column: 't', window: 2 },
      result: 'window: too_small: Too small: expected number to be >=3',
    },
    {
      rule: { kind: 'row_count_outlier', table: 'o', time_column: 't', max_ratio: 1 },
      result: 'max_ratio: too_small: Too small: expected number to be >1',
    },
    {
      rule: { kind: 'freshness', table: 'o', time_column: 't', max_age_minutes: 0 },
      result: 'max_age_minutes: too_small: Too small: expected number to be >0',
    },
    {
      rule: { kind: 'freshness', table: 'o', time_column: 't', max_age_minutes: 5, severity: 'error' },
      result: 'severity: invalid_value: Invalid option: expected one of "warn"|"fail"',
    },
    {
      rule: { kind: 'custom_sql', name: 'c', sql: 'select 1' },
      result: ': custom: custom_sql needs min, max or both: the bounds its single value must stay within',
    },
    { rule: { kind: 'custom_sql', name: 'c', sql: 'select 1', min: 5, max: 1 }, result: 'min: custom: min 5 is greater than max 1' },
  ];
  it.each(cases)('$rule.kind $result', ({ rule, result }) => {
    if (typeof result === 'string') expect(firstIssue(qualityRuleSchema, rule)).toBe(result);
    else expect(qualityRuleSchema.parse(rule)).toEqual({ ...rule, ...(result as object) });
  });
});

describe('configSchema', () => {
  it('fills in connection defaults', () => {
    expect(
      configSchema.parse({
        connections: {
          warehouse: { kind: 'postgres', url: 'postgres://backfill@db.internal:5432/analytics', password_env: 'WAREHOUSE_PASSWORD' },
          lake: { kind: 's3', bucket: 'amplitude-raw-bucket' },
        },
      }),
    ).toEqual({
      connections: {
        warehouse: {
          kind: 'postgres',
          url: 'postgres://backfill@db.internal:5432/analytics',
          password_env: 'WAREHOUSE_PASSWORD',
          statement_timeout_ms: 300_000,
          lock_timeout_ms: 5_000,
          connect_timeout_ms: 10_000,
        },
        lake: { kind: 's3', bucket: 'amplitude-raw-bucket', region: 'us-east-1', force_path_style: false, no_sign_request: false },
      },
      sandbox: false,
    });
  });

  const pg = (url: string, extra: Record<string, unknown> = {}) => ({ connections: { w: { kind: 'postgres', url, ...extra } } });
  const cases: { name: string; input: unknown; issue: string }[] = [
    { name: 'postgresql:// scheme', input: pg('postgresql://u@h/db'), issue: 'ok' },
    {
      name: 'password in the URL',
      input: pg('postgres://backfill:s3cret@db:5432/analytics'),
      issue:
        'connections.w.url: custom: contains a password ("postgres://backfill:***@db:5432/analytics"): remove it and set password_env to the name of an environment variable that holds it',
    },
    {
      name: 'password with an @ in it',
      input: pg('postgres://backfill:p@ss@db/analytics'),
      issue:
        'connections.w.url: custom: contains a password ("postgres://backfill:***@db/analytics"): remove it and set password_env to the name of an environment variable that holds it',
    },
    {
      name: 'password as a query parameter',
      input: pg('postgres://backfill@db/analytics?password=s3cret&sslmode=require'),
      issue:
        'connections.w.url: custom: contains a password ("postgres://backfill@db/analytics?password=***&sslmode=require"): remove it and set password_env to the name of an environment variable that holds it',
    },
    {
      name: 'not a postgres URL',
      input: pg('mysql://u@h/db'),
      issue: 'connections.w.url: custom: must start with postgres:// or postgresql://, got "mysql://u@h/db"',
    },
    {
      name: 'timeout zero',
      input: pg('postgres://u@h/db', { lock_timeout_ms: 0 }),
      issue: 'connections.w.lock_timeout_ms: too_small: Too small: expected number to be >0',
    },
    {
      name: 'timeout fractional',
      input: pg('postgres://u@h/db', { statement_timeout_ms: 1.5 }),
      issue: 'connections.w.statement_timeout_ms: invalid_type: Invalid input: expected int, received number',
    },
    {
      name: 'unknown kind',
      input: { connections: { w: { kind: 'mysql' } } },
      issue: "connections.w.kind: invalid_union: Invalid discriminator value. Expected 'postgres' | 's3'",
    },
    {
      name: 'S3 without a bucket',
      input: { connections: { l: { kind: 's3' } } },
      issue: 'connections.l.bucket: invalid_type: Invalid input: expected string, received undefined',
    },
    {
      name: 'S3 endpoint not a URL',
      input: { connections: { l: { kind: 's3', bucket: 'b', endpoint: 'localhost' } } },
      issue: 'connections.l.endpoint: invalid_format: Invalid URL',
    },
    {
      name: 'bad connection name',
      input: { connections: { 'bad name': { kind: 's3', bucket: 'b' } } },
      issue: 'connections.bad name: invalid_key: Invalid key in record',
    },
  ];
  it.each(cases)('$name', ({ input, issue }) => {
    expect(firstIssue(configSchema, input)).toBe(issue);
  });

  it('redacts passwords and leaves other URLs alone', () => {
    expect(redactUrl('postgres://u:pw@h:5432/db')).toBe('postgres://u:***@h:5432/db');
    expect(redactUrl('postgres://h:5432/db')).toBe('postgres://h:5432/db');
    expect(redactUrl('postgres://u@h/db?sslmode=require&PASSWORD=x')).toBe('postgres://u@h/db?sslmode=require&PASSWORD=***');
  });
});

describe('planSchema', () => {
  it('fills in defaults', () => {
    expect(planSchema.parse(minimalPlan)).toEqual({
      ...minimalPlan,
      reason: '',
      throttle: { sleep_ms: 0, concurrency: 1 },
      stop: { max_consecutive_failures: 3, probes: [], check_interval_ms: 1000 },
    });
  });

  const cases: { name: string; change: Record<string, unknown>; issue: string }[] = [
    { name: 'a vague range is accepted here (it is a red flag later)', change: { range: { from: 'last 3 months', to: '' } }, issue: 'ok' },
    {
      name: 'request id with a space',
      change: { request_id: 'bf 1' },
      issue: 'request_id: invalid_format: must be letters, digits, ".", "_", ":" or "-" (at most 128), starting with a letter or digit',
    },
    {
      name: 'concurrency over 16',
      change: { throttle: { concurrency: 17 } },
      issue: 'throttle.concurrency: too_big: Too big: expected number to be <=16',
    },
    {
      name: 'negative sleep',
      change: { throttle: { sleep_ms: -1 } },
      issue: 'throttle.sleep_ms: too_small: Too small: expected number to be >=0',
    },
    {
      name: 'zero failures allowed',
      change: { stop: { max_consecutive_failures: 0 } },
      issue: 'stop.max_consecutive_failures: too_small: Too small: expected number to be >=1',
    },
    { name: 'unknown stop condition', change: { stop: { max_lag: 3 } }, issue: 'stop: unrecognized_keys: Unrecognized key: "max_lag"' },
    {
      name: 'range as a string',
      change: { range: '2026-05' },
      issue: 'range: invalid_type: Invalid input: expected object, received string',
    },
    {
      name: 'range date as a number',
      change: { range: { from: 2026, to: '2027' } },
      issue: 'range.from: invalid_type: Invalid input: expected string, received number',
    },
  ];
  it.each(cases)('$name', ({ change, issue }) => {
    expect(firstIssue(planSchema, { ...minimalPlan, ...change })).toBe(issue);
  });
});

describe('isTimeZone', () => {
  it.each([
    ['UTC', true],
    ['Asia/Seoul', true],
    ['america/new_york', true],
    ['Australia/Lord_Howe', true],
    ['Asia/Seol', false],
    ['', false],
    ['  ', false],
    ['+25:00', false],
  ] as const)('%s → %s', (zone, ok) => {
    expect(isTimeZone(zone)).toBe(ok);
  });
});
