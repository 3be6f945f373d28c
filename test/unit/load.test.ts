import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findJobs, loadConfig, loadJob, loadPlan, parseYamlFile } from '../../electron/engine/plan/load.ts';
import { InputError } from '../../shared/errors.ts';
import { configSchema, jobSchema, planSchema, type Config } from '../../shared/schemas.ts';

let dir: string;
let jobsDir: string;

const goodJob = `name: NAME
unit: day
timezone: Asia/Seoul
classification: { billing: true, downstream: [dashboard.revenue_weekly] }
source:
  connection: warehouse
  query: |
    select cast(paid_at as date) as order_date, count(*) as orders
    from orders where paid_at >= :partition_start and paid_at < :partition_end group by 1
target: { connection: warehouse, table: mart.mart_order_daily, partition_column: order_date, key: [order_date] }
write_mode: overwrite-partition
quality:
  - { kind: null_rate, table: orders, column: customer_id, time_column: paid_at, max: 0.01 }
`;
const config: Config = configSchema.parse({
  connections: { warehouse: { kind: 'postgres', url: 'postgres://backfill@db/analytics' }, lake: { kind: 's3', bucket: 'b' } },
});

/** Writes `text` to a file in the temp folder and returns its path. */
function file(name: string, text: string): string {
  const full = path.join(dir, name);
  mkdirSync(path.dirname(full), { recursive: true });
  writeFileSync(full, text);
  return full;
}

function failure(run: () => unknown): InputError {
  try {
    run();
  } catch (error) {
    if (error instanceof InputError) return error;
    throw error;
  }
  throw new Error('expected an InputError, nothing was thrown');
}

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'runbook-load-'));
  jobsDir = path.join(dir, 'jobs');
  file('jobs/order-daily-mart.yaml', goodJob.replace('NAME', 'order-daily-mart'));
  file('jobs/refunds.yml', goodJob.replace('NAME', 'refunds').replace('connection: warehouse\n  query', 'connection: warehuose\n  query'));
  file('jobs/renamed.yaml', goodJob.replace('NAME', 'something-else'));
  file('jobs/twice.yaml', goodJob.replace('NAME', 'twice'));
  file('jobs/twice.yml', goodJob.replace('NAME', 'twice'));
  file('jobs/README.md', '# not a job');
  file('jobs/Upper.yaml', goodJob.replace('NAME', 'Upper'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('loadJob', () => {
  it('loads a job with defaults filled in', () => {
    const { job, file: jobFile } = loadJob(jobsDir, 'order-daily-mart', config);
    expect(jobFile).toBe(path.join(jobsDir, 'order-daily-mart.yaml'));
    expect(job.classification).toEqual({ billing: true, external_partner: false, downstream: ['dashboard.revenue_weekly'] });
    expect('query' in job.source ? job.source.query : undefined).toContain('paid_at >= :partition_start');
    expect(job.quality).toEqual([
      { kind: 'null_rate', table: 'orders', column: 'customer_id', time_column: 'paid_at', max: 0.01, severity: 'fail' },
    ]);
    expect(job.validation).toEqual([]);
  });

  it('finds .yml files and lists valid job names only', () => {
    expect(findJobs(jobsDir)).toEqual(['order-daily-mart', 'refunds', 'renamed', 'twice']);
    expect(loadJob(jobsDir, 'refunds').job.name).toBe('refunds');
  });

  const cases: { name: string; job: string; config?: Config; message: () => string; field?: string; value?: unknown }[] = [
    {
      name: 'unknown job lists those available',
      job: 'order-daily',
      message: () => `job order-daily not found in ${jobsDir}: jobs available there: order-daily-mart, refunds, renamed, twice`,
      field: 'job',
      value: 'order-daily',
    },
    {
      name: 'a near miss is suggested',
      job: 'refund',
      message: () =>
        `job refund not found in ${jobsDir} (did you mean refunds?): jobs available there: order-daily-mart, refunds, renamed, twice`,
    },
    {
      name: 'a hostile name is refused before any file is touched',
      job: '../../etc/passwd',
      message: () =>
        'job name "../../etc/passwd" is not valid: use lowercase letters, digits, ".", "_" or "-", starting with a letter or digit',
      field: 'job',
    },
    {
      name: 'quotes and semicolons are refused',
      job: "x'; drop table t; --",
      message: () =>
        `job name "x'; drop table t; --" is not valid: use lowercase letters, digits, ".", "_" or "-", starting with a letter or digit`,
    },
    {
      name: 'the name inside must match the file',
      job: 'renamed',
      message: () =>
        `${path.join(jobsDir, 'renamed.yaml')}: field "name": "something-else" does not match the file name renamed: rename the file or the job so they agree`,
      field: 'name',
      value: 'something-else',
    },
    {
      name: 'two files for one job',
      job: 'twice',
      message: () => `job twice is defined twice, in ${path.join(jobsDir, 'twice.yaml')} and ${path.join(jobsDir, 'twice.yml')}: keep one`,
    },
    {
      name: 'unknown connection, with a suggestion and the known names',
      job: 'refunds',
      config,
      message: () =>
        `${path.join(jobsDir, 'refunds.yml')}: field "source.connection": "warehuose" is not a connection in the config (did you mean "warehouse"?); connections in the config: warehouse, lake`,
      field: 'source.connection',
      value: 'warehuose',
    },
    {
      name: 'a config without connections',
      job: 'order-daily-mart',
      config: { connections: {}, sandbox: false },
      message: () =>
        `${path.join(jobsDir, 'order-daily-mart.yaml')}: field "source.connection": "warehouse" is not a connection in the config; the config has no connections`,
    },
  ];
  it.each(cases)('$name', (c) => {
    const error = failure(() => loadJob(jobsDir, c.job, c.config));
    expect(error.message).toBe(c.message());
    if (c.field) expect(error.details.field).toBe(c.field);
    if (c.value) expect(error.details.value).toBe(c.value);
  });

  it('a missing jobs folder says how to point at one', () => {
    const missing = path.join(dir, 'nowhere');
    expect(failure(() => loadJob(missing, 'x')).message).toBe(`jobs folder ${missing} not found: pass --jobs DIR`);
    expect(failure(() => findJobs(missing)).message).toBe(`jobs folder ${missing} not found: pass --jobs DIR`);
  });

  it('an empty jobs folder says so', () => {
    const empty = path.join(dir, 'empty-jobs');
    mkdirSync(empty);
    expect(failure(() => loadJob(empty, 'x')).message).toBe(`job x not found in ${empty}: that folder has no job files (<name>.yaml)`);
  });
});

describe('parseYamlFile: problems in the file', () => {
  const job = (body: string) => goodJob.replace('NAME', 'j') + body;
  const cases: { name: string; text: string; message: string; field?: string; value?: unknown }[] = [
    { name: 'empty file', text: '', message: 'FILE is empty: a job file needs at least name, unit, source, target and write_mode' },
    {
      name: 'only a comment',
      text: '# nothing yet\n',
      message: 'FILE is empty: a job file needs at least name, unit, source, target and write_mode',
    },
    {
      name: 'bad indentation',
      text: 'name: j\nunit: day\n  source: x\n',
      message: 'FILE:2:7: YAML syntax error: Nested mappings are not allowed in compact mappings',
    },
    {
      name: 'unclosed flow list',
      text: 'name: j\ntarget: { key: [a, b }\n',
      message: 'FILE:2:22: YAML syntax error: Flow sequence in block collection must be sufficiently indented and end with a ]',
    },
    { name: 'duplicate key', text: 'name: j\nunit: day\nunit: hour\n', message: 'FILE:3:1: YAML syntax error: Map keys must be unique' },
    {
      name: 'a list, not a mapping',
      text: '- name: j\n',
      message: 'FILE: expected a mapping of fields at the top level, got a list',
      field: '',
    },
    {
      name: 'wrong type in a list',
      text: goodJob.replace('NAME', 'j').replace('key: [order_date]', 'key: [order_date, 42]'),
      message: 'FILE: field "target.key[1]": expected string, got 42',
      field: 'target.key[1]',
      value: 42,
    },
    {
      name: 'misspelt field with a suggestion',
      text: goodJob.replace('NAME', 'j').replace('table: mart', 'tabel: mart'),
      message: 'FILE: unknown field "target.tabel" (did you mean "table"?) (and 1 more problem)',
      field: 'target.tabel',
      value: 'mart.mart_order_daily',
    },
    {
      name: 'unknown field, far from any, lists the allowed ones',
      text: job('owner_team: data\n'),
      message:
        'FILE: unknown field "owner_team" (allowed: name, description, unit, timezone, classification, source, target, write_mode, validation, quality, retention, closed_partitions, red_flags)',
    },
    {
      name: 'misspelt field inside a quality rule of some kind',
      text: job('  - { kind: freshness, table: orders, time_column: paid_at, max_age_minute: 5 }\n'),
      message: 'FILE: unknown field "quality[1].max_age_minute" (did you mean "max_age_minutes"?) (and 1 more problem)',
    },
    {
      name: 'extra field inside a quality rule of some kind',
      text: job('  - { kind: freshness, table: orders, time_column: paid_at, max_age_minutes: 5, sevrity: warn }\n'),
      message: 'FILE: unknown field "quality[1].sevrity" (did you mean "severity"?)',
    },
    {
      name: 'enum lists the allowed values',
      text: goodJob.replace('NAME', 'j').replace('unit: day', 'unit: week'),
      message: 'FILE: field "unit": "week" is not one of hour, day, month',
      field: 'unit',
      value: 'week',
    },
    {
      name: 'unknown quality kind lists the kinds',
      text: job('  - { kind: nul_rate, table: orders }\n'),
      message:
        'FILE: field "quality[1].kind": "nul_rate" is not one of null_rate, row_count_outlier, timestamp_order, freshness, custom_sql',
    },
    {
      name: 'missing quality kind',
      text: job('  - { table: orders }\n'),
      message: 'FILE: field "quality[1].kind" is missing: one of null_rate, row_count_outlier, timestamp_order, freshness, custom_sql',
    },
    {
      name: 'number out of range',
      text: job('  - { kind: null_rate, table: orders, column: c, time_column: t, max: 1.5 }\n'),
      message: 'FILE: field "quality[1].max": must be at most 1, got 1.5',
    },
    {
      name: 'bound that excludes itself',
      text: job('  - { kind: row_count_outlier, table: orders, time_column: t, max_ratio: 1 }\n'),
      message: 'FILE: field "quality[1].max_ratio": must be greater than 1, got 1',
    },
    {
      name: 'an integer expected',
      text: job('  - { kind: row_count_outlier, table: orders, time_column: t, window: 3.5 }\n'),
      message: 'FILE: field "quality[1].window": expected an integer, got 3.5',
    },
    {
      name: 'an empty value',
      text: goodJob.replace('NAME', 'j').replace('write_mode: overwrite-partition', 'write_mode:'),
      message: 'FILE: field "write_mode" is empty: one of overwrite-partition, upsert, append-dedupe',
    },
    {
      name: 'an empty value where text belongs',
      text: goodJob.replace('NAME', 'j').replace('partition_column: order_date', 'partition_column: '),
      message: 'FILE: field "target.partition_column" is empty (expected string)',
    },
    {
      name: 'an empty string',
      text: goodJob.replace('NAME', 'j').replace('partition_column: order_date', 'partition_column: ""'),
      message: 'FILE: field "target.partition_column": must not be empty, got ""',
    },
    {
      name: 'a mapping where text belongs',
      text: goodJob.replace('NAME', 'j').replace('timezone: Asia/Seoul', 'timezone: { name: Asia/Seoul }'),
      message: 'FILE: field "timezone": expected string, got a mapping',
    },
    {
      name: 'bad time zone',
      text: goodJob.replace('NAME', 'j').replace('timezone: Asia/Seoul', 'timezone: Asia/Seol'),
      message: 'FILE: field "timezone": unknown time zone "Asia/Seol": use an IANA name like UTC, Asia/Seoul or America/New_York',
      field: 'timezone',
      value: 'Asia/Seol',
    },
    {
      name: 'bad job name',
      text: goodJob.replace('NAME', '"Order Mart"'),
      message:
        'FILE: field "name": must be lowercase letters, digits, ".", "_" or "-" (at most 100), starting with a letter or digit, got "Order Mart"',
    },
    {
      name: 'several problems are counted',
      text: 'name: j\nunit: day\nwrite_mode: upsert\n',
      message: 'FILE: field "source" is missing (expected a mapping) (and 1 more problem)',
    },
  ];
  it.each(cases)('$name', (c) => {
    const target = file(`cases/${c.name.replaceAll(/\W+/g, '-')}.yaml`, c.text);
    const error = failure(() => parseYamlFile(target, jobSchema, 'job'));
    expect(error.message).toBe(c.message.replace('FILE', target));
    expect(error.details.file).toBe(target);
    if (c.field !== undefined) expect(error.details.field).toBe(c.field);
    if (c.value !== undefined) expect(error.details.value).toBe(c.value);
  });

  it('a YAML alias bomb is refused', () => {
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      ...Array.from(
        { length: 8 },
        (_, i) =>
          `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10)
            .fill(`*${String.fromCharCode(97 + i)}`)
            .join(', ')}]`,
      ),
    ].join('\n');
    const target = file('cases/bomb.yaml', `${bomb}\n`);
    expect(failure(() => parseYamlFile(target, planSchema, 'plan')).message).toMatch(/^.*bomb\.yaml: Excessive alias count/);
  });
});

describe('loadConfig and loadPlan', () => {
  it('loads a config', () => {
    const target = file(
      'backfill.config.yaml',
      'connections:\n  warehouse:\n    kind: postgres\n    url: postgres://backfill@db:5432/analytics\n    password_env: WAREHOUSE_PASSWORD\n',
    );
    expect(loadConfig(target).connections.warehouse).toMatchObject({
      kind: 'postgres',
      password_env: 'WAREHOUSE_PASSWORD',
      lock_timeout_ms: 5000,
    });
  });

  it('a missing config says how to get one', () => {
    expect(failure(() => loadConfig('./no-such.config.yaml')).message).toBe(
      'config file ./no-such.config.yaml not found: pass --config FILE or run `run-backfill sandbox up`',
    );
  });

  it('a password in the config is refused and never echoed', () => {
    const target = file('secret.config.yaml', 'connections:\n  w: { kind: postgres, url: "postgres://backfill:hunter2@db/analytics" }\n');
    const error = failure(() => loadConfig(target));
    expect(error.message).toBe(
      `${target}: field "connections.w.url": contains a password ("postgres://backfill:***@db/analytics"): remove it and set password_env to the name of an environment variable that holds it`,
    );
    expect(JSON.stringify(error.details)).not.toContain('hunter2');
  });

  it('loads a plan, keeping dates as text', () => {
    const target = file(
      'plan.yaml',
      [
        'request_id: bf-2026-06-order-refund',
        'reason: refund reason mapping bug',
        'job: order-daily-mart',
        'range: { from: 2026-05-01, to: 2026-07-01 }   # half-open',
        'write_mode: overwrite-partition',
        'throttle: { sleep_ms: 10000, concurrency: 1 }',
        'stop: { max_replication_lag_s: 30, max_lock_wait_ms: 5000, max_consecutive_failures: 3, max_row_diff_ratio: 0.2 }',
        'owner: data-platform',
        'requested_by: alice',
      ].join('\n'),
    );
    expect(loadPlan(target)).toEqual({
      request_id: 'bf-2026-06-order-refund',
      reason: 'refund reason mapping bug',
      job: 'order-daily-mart',
      range: { from: '2026-05-01', to: '2026-07-01' },
      write_mode: 'overwrite-partition',
      throttle: { sleep_ms: 10000, concurrency: 1 },
      stop: {
        max_replication_lag_s: 30,
        max_lock_wait_ms: 5000,
        max_consecutive_failures: 3,
        max_row_diff_ratio: 0.2,
        probes: [],
        check_interval_ms: 1000,
      },
      owner: 'data-platform',
      requested_by: 'alice',
    });
  });

  it('a missing plan and a folder given as a plan', () => {
    expect(failure(() => loadPlan(path.join(dir, 'nope.yaml'))).message).toBe(
      `plan file ${path.join(dir, 'nope.yaml')} not found: check the path given to --plan`,
    );
    expect(failure(() => loadPlan(jobsDir)).message).toBe(`plan file ${jobsDir} is a folder, not a YAML file`);
  });

  it('an unknown plan field is named', () => {
    const target = file(
      'plan-typo.yaml',
      'request_id: r\njob: j\nrange: { from: 2026-05-01, to: 2026-06-01 }\nwrite_mode: upsert\nthrotle: { sleep_ms: 5 }\n',
    );
    expect(failure(() => loadPlan(target)).message).toBe(`${target}: unknown field "throtle" (did you mean "throttle"?)`);
  });
});
