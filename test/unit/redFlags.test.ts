import { describe, expect, it } from 'vitest';
import { blocking, redFlags, type RedFlag, type RedFlagInput } from '../../shared/redFlags.ts';
import { jobSchema, planSchema, type JobInput, type PlanInput } from '../../shared/schemas.ts';

const baseJob = {
  name: 'order-daily-mart',
  unit: 'day',
  source: { connection: 'warehouse', query: 'select 1' },
  target: { connection: 'warehouse', table: 'mart.mart_order_daily', partition_column: 'order_date', key: ['order_date', 'customer_id'] },
  write_mode: 'overwrite-partition',
  validation: [{ name: 'rows', source: 'select count(*) from orders', target: 'select count(*) from mart.mart_order_daily' }],
} satisfies JobInput;
const basePlan: PlanInput = {
  request_id: 'bf-2026-06-order-refund',
  job: 'order-daily-mart',
  range: { from: '2026-05-01', to: '2026-07-01' },
  write_mode: 'overwrite-partition',
  throttle: { sleep_ms: 10_000, concurrency: 1 },
  stop: { max_replication_lag_s: 30 },
};

function flagsFor(
  change: { plan?: Partial<PlanInput>; job?: Partial<JobInput>; input?: Partial<Omit<RedFlagInput, 'plan' | 'job'>> } = {},
): RedFlag[] {
  return redFlags({
    plan: planSchema.parse({ ...basePlan, ...change.plan }),
    job: jobSchema.parse({ ...baseJob, ...change.job }),
    partitionCount: 61,
    dryRunOnRecord: true,
    tier: 'semi-auto',
    ...change.input,
  });
}

describe('redFlags', () => {
  it('a careful plan raises none', () => {
    expect(flagsFor()).toEqual([]);
  });

  const cases: { name: string; change: Parameters<typeof flagsFor>[0]; flags: RedFlag[] }[] = [
    {
      name: 'relative range',
      change: { plan: { range: { from: 'last 3 months', to: 'now' } } },
      flags: [
        {
          code: 'vague-range',
          severity: 'block',
          field: 'range.from',
          message: 'range.from "last 3 months" is not an absolute date: write YYYY-MM-DD, YYYY-MM or YYYY-MM-DDTHH (to is exclusive)',
        },
        {
          code: 'vague-range',
          severity: 'block',
          field: 'range.to',
          message: 'range.to "now" is not an absolute date: write YYYY-MM-DD, YYYY-MM or YYYY-MM-DDTHH (to is exclusive)',
        },
      ],
    },
    {
      name: 'empty range end',
      change: { plan: { range: { from: '2026-05-01', to: '  ' } } },
      flags: [
        { code: 'vague-range', severity: 'block', field: 'range.to', message: 'range.to is empty: give an absolute date like 2026-05-01' },
      ],
    },
    {
      name: '"today" is vague',
      change: { plan: { range: { from: 'today', to: '2026-07-01' } } },
      flags: [
        {
          code: 'vague-range',
          severity: 'block',
          field: 'range.from',
          message: 'range.from "today" is not an absolute date: write YYYY-MM-DD, YYYY-MM or YYYY-MM-DDTHH (to is exclusive)',
        },
      ],
    },
    {
      name: 'no dry run, semi-auto',
      change: { input: { dryRunOnRecord: false } },
      flags: [
        {
          code: 'no-dry-run',
          severity: 'warn',
          message: 'no dry run on record for this exact plan (same range, mode and throttle): run the same command with --dry-run first',
        },
      ],
    },
    {
      name: 'no dry run, manual',
      change: { input: { dryRunOnRecord: false, tier: 'manual' } },
      flags: [
        {
          code: 'no-dry-run',
          severity: 'block',
          message: 'no dry run on record for this exact plan (same range, mode and throttle): run the same command with --dry-run first',
        },
      ],
    },
    {
      name: 'concurrency without a pause',
      change: { plan: { throttle: { sleep_ms: 0, concurrency: 4 } }, input: { partitionCount: 3 } },
      flags: [
        {
          code: 'no-throttle',
          severity: 'warn',
          field: 'throttle.sleep_ms',
          message: 'no throttle: 4 partitions at a time with no pause between them: set throttle.sleep_ms (--sleep-ms)',
        },
      ],
    },
    {
      name: 'many partitions without a pause',
      change: { plan: { throttle: { sleep_ms: 0 } }, input: { partitionCount: 25 } },
      flags: [
        {
          code: 'no-throttle',
          severity: 'warn',
          field: 'throttle.sleep_ms',
          message: 'no throttle: 25 partitions with no pause between them: set throttle.sleep_ms (--sleep-ms)',
        },
      ],
    },
    { name: '24 partitions need no pause', change: { plan: { throttle: {} }, input: { partitionCount: 24 } }, flags: [] },
    { name: 'a pause with concurrency is a throttle', change: { plan: { throttle: { sleep_ms: 1, concurrency: 16 } } }, flags: [] },
    {
      name: 'no stop conditions (the default failure count does not count)',
      change: { plan: { stop: { max_consecutive_failures: 3 } } },
      flags: [
        {
          code: 'no-stop-conditions',
          severity: 'warn',
          field: 'stop',
          message: 'no stop conditions: set stop.max_replication_lag_s, stop.max_lock_wait_ms or stop.max_row_diff_ratio',
        },
      ],
    },
    { name: 'a lock wait limit is a stop condition', change: { plan: { stop: { max_lock_wait_ms: 5000 } } }, flags: [] },
    { name: 'a row diff limit is a stop condition', change: { plan: { stop: { max_row_diff_ratio: 0.2 } } }, flags: [] },
    {
      name: 'append-dedupe without a key',
      change: { plan: { write_mode: 'append-dedupe' }, job: { target: { ...baseJob.target, key: [] } } },
      flags: [
        {
          code: 'duplicate-risk',
          severity: 'block',
          field: 'target.key',
          message: 'append-dedupe without a key can duplicate rows: set target.key in the job',
        },
      ],
    },
    {
      name: 'upsert without a key',
      change: { plan: { write_mode: 'upsert' }, job: { target: { connection: 'warehouse', table: 't', partition_column: 'd' } } },
      flags: [
        {
          code: 'duplicate-risk',
          severity: 'block',
          field: 'target.key',
          message: 'upsert without a key can duplicate rows: set target.key in the job',
        },
      ],
    },
    { name: 'overwrite-partition needs no key', change: { job: { target: { ...baseJob.target, key: [] } } }, flags: [] },
    {
      name: 'no validation, semi-auto',
      change: { job: { validation: [] } },
      flags: [
        {
          code: 'no-validation',
          severity: 'warn',
          field: 'validation',
          message: 'the job has no validation rules: add one comparing source and target counts or sums',
        },
      ],
    },
    {
      name: 'no validation, manual',
      change: { job: { validation: [] }, input: { tier: 'manual' } },
      flags: [
        {
          code: 'no-validation',
          severity: 'block',
          field: 'validation',
          message: 'the job has no validation rules: add one comparing source and target counts or sums',
        },
      ],
    },
  ];
  it.each(cases)('$name', ({ change, flags }) => {
    expect(flagsFor(change)).toEqual(flags);
  });

  it('reports every flag at once, and blocking() keeps the blocking ones', () => {
    const flags = flagsFor({
      plan: { range: { from: '', to: '2026-07-01' }, write_mode: 'upsert', throttle: { sleep_ms: 0, concurrency: 2 }, stop: {} },
      job: { validation: [], target: { ...baseJob.target, key: [] } },
      input: { dryRunOnRecord: false, tier: 'auto' },
    });
    expect(flags.map((f) => `${f.code}:${f.severity}`)).toEqual([
      'vague-range:block',
      'no-dry-run:warn',
      'no-throttle:warn',
      'no-stop-conditions:warn',
      'duplicate-risk:block',
      'no-validation:warn',
    ]);
    expect(blocking(flags).map((f) => f.code)).toEqual(['vague-range', 'duplicate-risk']);
  });
});
