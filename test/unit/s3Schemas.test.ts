import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { canonicalJson } from '../../shared/canonicalJson.ts';
import { isPostgresJob, jobSchema, s3ConnectionSchema } from '../../shared/schemas.ts';
import type { InputError } from '../../shared/errors.ts';
import { s3Endpoint } from '../../electron/engine/targets/s3/client.ts';

const pgJob = {
  name: 'orders',
  unit: 'day',
  source: { connection: 'warehouse', query: 'select 1' },
  target: { connection: 'warehouse', table: 'mart.t', partition_column: 'd' },
  write_mode: 'overwrite-partition',
};
const s3Export = {
  name: 'raw-recovery',
  unit: 'hour',
  source: { connection: 'warehouse', query: 'select 1' },
  target: { kind: 's3', connection: 'lake', path: 'p-backfill/p-backfill_{date}_{hour}', prefix: 'p/', backfill_prefix: 'p-backfill/' },
  write_mode: 'overwrite-partition',
};

function firstIssue(schema: z.ZodType, input: unknown): string {
  const result = schema.safeParse(input);
  if (result.success) return 'ok';
  const issue = result.error.issues[0];
  return `${issue?.path.join('.')}: ${issue?.message}`;
}

describe('S3 sources and targets in a job', () => {
  it('fills in S3 defaults; a Postgres job parses exactly as before', () => {
    const parsed = jobSchema.parse(s3Export);
    expect(parsed.target).toEqual({ ...s3Export.target, format: 'jsonl', records_per_object: 1_000_000 });
    expect(isPostgresJob(parsed)).toBe(false);
    const pg = jobSchema.parse(pgJob);
    expect(Object.keys(pg.source)).toEqual(['connection', 'query']);
    expect(pg.target).toEqual({ ...pgJob.target, key: [] });
    expect(isPostgresJob(pg)).toBe(true);
    expect(jobSchema.parse({ ...pgJob, source: { kind: 'postgres', ...pgJob.source } }).source).toEqual({
      kind: 'postgres',
      ...pgJob.source,
    });
    // what is hashed for a job written before S3 existed has not changed, so its runs resume
    expect(canonicalJson(pg)).toBe(
      '{"classification":{"billing":false,"downstream":[],"external_partner":false},"name":"orders","quality":[],"source":{"connection":"warehouse","query":"select 1"},"target":{"connection":"warehouse","key":[],"partition_column":"d","table":"mart.t"},"timezone":"UTC","unit":"day","validation":[],"write_mode":"overwrite-partition"}',
    );
  });

  it('reads an S3 source with its defaults', () => {
    const job = jobSchema.parse({
      ...s3Export,
      source: { kind: 's3', connection: 'lake', path: 'p-backfill/p-backfill_{date}_{hour}' },
      target: pgJob.target,
      validation: [{ name: 'n', source: 'records', target: 'select count(*) as records from t' }],
    });
    expect(job.source).toEqual({
      kind: 's3',
      connection: 'lake',
      path: 'p-backfill/p-backfill_{date}_{hour}',
      format: 'jsonl',
      require_complete: true,
    });
  });

  const target = (change: Record<string, unknown>) => ({ ...s3Export, target: { ...s3Export.target, ...change } });
  const cases: { name: string; job: unknown; issue: string }[] = [
    { name: 'a good export', job: s3Export, issue: 'ok' },
    {
      name: 'unknown placeholder',
      job: target({ path: 'p-backfill/{PROJECT_ID}_{date}' }),
      issue:
        'target.path: "p-backfill/{PROJECT_ID}_{date}" uses {PROJECT_ID}, which is not a placeholder: use {date}, {hour}, {yyyy}, {mm}, {dd}, {hh} or {partition}, and write fixed names (a project id) literally',
    },
    {
      name: 'a URL for a path',
      job: target({ path: 's3://bucket/p/{date}' }),
      issue:
        'target.path: "s3://bucket/p/{date}" is a URL: give the key inside the bucket (the bucket comes from the connection), e.g. "events-backfill/events-backfill_{date}_{hour}" or "refined/event/dt={date}/"',
    },
    {
      name: 'a leading slash',
      job: target({ path: '/p/{date}_{hour}' }),
      issue: 'target.path: "/p/{date}_{hour}" starts with "/": S3 keys do not, so nothing would ever match',
    },
    {
      name: 'unmatched brace',
      job: target({ path: 'p-backfill/{date}_{hour' }),
      issue: 'target.path: "p-backfill/{date}_{hour" has an unmatched "{" or "}"',
    },
    {
      name: 'prefix without a slash',
      job: target({ prefix: 'p' }),
      issue: 'target.prefix: "p" must end with "/": a reader listing "p" would also see "p-backfill/…"',
    },
    {
      name: 'prefix with a placeholder',
      job: target({ prefix: '{date}/' }),
      issue: 'target.prefix: "{date}/" has placeholders: a prefix is fixed (write a project id literally)',
    },
    {
      name: 'overlapping prefixes',
      job: target({ backfill_prefix: 'p/backfill/' }),
      issue:
        'target.backfill_prefix: "p/backfill/" overlaps the automated prefix "p/": a reader listing one would see the other\'s objects; use a sibling such as "p-backfill/"',
    },
    {
      name: 'path outside the backfill prefix',
      job: target({ path: 'elsewhere/x_{date}_{hour}' }),
      issue: 'target.path: "elsewhere/x_{date}_{hour}" is not under backfill_prefix "p-backfill/": start it with "p-backfill/"',
    },
    // under the automated prefix is the gate's to refuse (exit 4), not a file error
    { name: 'path under the automated prefix parses', job: target({ path: 'p/p_{date}_{hour}' }), issue: 'ok' },
    {
      name: '{hour} in a daily job',
      job: { ...target({ path: 'p-backfill/{date}_{hour}' }), unit: 'day' },
      issue: "target.path: uses {hour} but the job's unit is day: a daily partition has no single hour",
    },
    {
      name: 'no partition in the path',
      job: target({ path: 'p-backfill/all' }),
      issue:
        'target.path: "p-backfill/all" has neither {date} (nor {yyyy}, {mm} and {dd}) nor {partition}: every partition would share one location',
    },
    {
      name: 'hourly without {hour}',
      job: target({ path: 'p-backfill/{date}' }),
      issue: 'target.path: "p-backfill/{date}" has {date} but not {hour}: the 24 hourly partitions of a day would share one location',
    },
    {
      name: 'upsert into S3',
      job: { ...s3Export, write_mode: 'upsert' },
      issue:
        'write_mode: upsert cannot apply to an S3 target: its partitions are replaced whole (a new manifest swaps them atomically); use overwrite-partition',
    },
    {
      // S3 sides may be DuckDB SQL over `target` / `source`: checked to be one SELECT when they run
      name: 'SQL on the S3 side of a rule',
      job: { ...s3Export, validation: [{ name: 'n', source: 'select 1', target: 'select count(*) from target' }] },
      issue: 'ok',
    },
    { name: 'unknown S3 field', job: target({ gzipped: true }), issue: 'target: Unrecognized key: "gzipped"' },
    {
      name: 'unknown kind',
      job: target({ kind: 'gcs' }),
      issue: "target.kind: Invalid discriminator value. Expected 'postgres' | 'undefined' | 's3'",
    },
    {
      name: 'quality rules on an S3 source',
      job: {
        ...s3Export,
        source: { kind: 's3', connection: 'lake', path: 'a/{date}_{hour}' },
        target: pgJob.target,
        quality: [{ kind: 'freshness', table: 't', time_column: 'c', max_age_minutes: 5 }],
      },
      issue:
        'quality: quality rules run SQL on a Postgres source; this job reads S3 objects: remove them (records are validated as they are read)',
    },
  ];
  it.each(cases)('$name', ({ job, issue }) => {
    expect(firstIssue(jobSchema, job)).toBe(issue);
  });
});

describe('an S3 connection that sends requests unsigned (no_sign_request)', () => {
  const lake = (extra: Record<string, unknown>) => s3ConnectionSchema.parse({ kind: 's3', bucket: 'b', ...extra });

  it('defaults to signed requests', () => {
    expect(lake({}).no_sign_request).toBe(false);
    expect(s3Endpoint('lake', lake({}), {})).toEqual({ name: 'lake', connection: lake({}) });
  });

  it('needs no credentials and asks for none', () => {
    expect(s3Endpoint('lake', lake({ no_sign_request: true }), {})).toEqual({
      name: 'lake',
      connection: lake({ no_sign_request: true }),
      unsigned: true,
    });
  });

  it('refuses credential variables beside it, naming the field', () => {
    const both = lake({ no_sign_request: true, access_key_id_env: 'K', secret_access_key_env: 'S' });
    expect(() => s3Endpoint('lake', both, { K: 'k', S: 's' })).toThrow(
      'connection "lake" sets no_sign_request and also names credential variables: requests are either signed or not',
    );
    let caught: unknown;
    try {
      s3Endpoint('lake', both, {});
    } catch (err) {
      caught = err;
    }
    expect((caught as InputError).details.field).toBe('connections.lake.no_sign_request');
  });

  it('rejects a value that is not a boolean', () => {
    expect(firstIssue(s3ConnectionSchema, { kind: 's3', bucket: 'b', no_sign_request: 'yes' })).toBe(
      'no_sign_request: Invalid input: expected boolean, received string',
    );
  });
});
