/**
 * An hourly event stream for the S3 tests: a Postgres `events` table (deterministic, seeded),
 * the job files that move it between Postgres and S3, and an md5 oracle over its rows.
 */
import type pg from 'pg';

export const PROJECT = 'proj-4821';

/** `hours` hours of events from `from` (UTC), about `perHour` each, deterministic for a seed. */
export async function seedEvents(
  client: pg.Client,
  table: string,
  opts: { from: string; hours: number; perHour: number; seed: number },
): Promise<number> {
  await client.query(`create table ${table} (
    event_id bigint not null, user_id int, event_type text not null, event_time timestamptz not null,
    amount numeric(12,2), note text, props jsonb, primary key (event_id))`);
  await client.query(
    `insert into ${table}
     select g, (g * 7919 + s) % 5000, (array['click','view','buy','refund'])[1 + (g * 31 + s) % 4],
            $1::timestamptz + ((g - 1) / per) * interval '1 hour' + ((g * 104729 + s) % 3600) * interval '1 second',
            case when g % 7 = 0 then null else ((g * 977 + s) % 100000) / 100.0 end,
            case when g % 11 = 0 then E'tab\\there "quoted" back\\\\slash ünïcode' else 'n' || g end,
            jsonb_build_object('k', g % 13, 's', 'v' || (g % 5))
       from (select $2::int as per, $3::int as s, $4::int as h) as p, generate_series(1, per * h) as g`,
    [`${opts.from}T00:00:00Z`, opts.perHour, opts.seed, opts.hours],
  );
  return opts.hours * opts.perHour;
}

/** md5 of the rows of [from, to) ordered by their text: equal tables give equal sums. */
export async function eventsMd5(client: pg.Client, table: string, from: string, to: string): Promise<string> {
  const r = await client.query<{ md5: string; n: string }>(
    `select md5(coalesce(string_agg(t::text, E'\\n' order by t::text), '')) as md5, count(*)::text as n from ${table} t where event_time >= $1 and event_time < $2`,
    [from, to],
  );
  return `${r.rows[0]?.n}:${r.rows[0]?.md5}`;
}

const common = (name: string, extra = '') => `name: ${name}
unit: hour
timezone: UTC
classification:
  billing: false
${extra}`;

/** Postgres events → S3 JSON Lines (gzip) under `path`. */
export function exportJob(
  name: string,
  opts: { path: string; prefix?: string; backfillPrefix?: string; recordsPerObject?: number; gzip?: boolean; table?: string },
): string {
  return `${common(name)}source:
  connection: warehouse
  query: |
    select event_id, user_id, event_type, event_time, amount, note, props
    from ${opts.table ?? 'events'}
    where event_time >= :partition_start and event_time < :partition_end
target:
  kind: s3
  connection: lake
  path: ${JSON.stringify(opts.path)}
${opts.prefix ? `  prefix: ${JSON.stringify(opts.prefix)}\n` : ''}${opts.backfillPrefix ? `  backfill_prefix: ${JSON.stringify(opts.backfillPrefix)}\n` : ''}${opts.recordsPerObject ? `  records_per_object: ${opts.recordsPerObject}\n` : ''}${opts.gzip === false ? '  gzip: false\n' : ''}write_mode: overwrite-partition
validation:
  - name: events exported
    source: select count(*) as records from ${opts.table ?? 'events'} where event_time >= :partition_start and event_time < :partition_end
    target: records
`;
}

/** S3 → S3: one hourly partition of raw objects into a refined location. */
export function refineJob(name: string, opts: { from: string; to: string; requireComplete?: boolean }): string {
  return `${common(name)}source:
  kind: s3
  connection: lake
  path: ${JSON.stringify(opts.from)}
${opts.requireComplete === false ? '  require_complete: false\n' : ''}target:
  kind: s3
  connection: lake
  path: ${JSON.stringify(opts.to)}
write_mode: overwrite-partition
validation:
  - name: records carried over
    source: records
    target: records
`;
}

/** S3 JSON Lines → a Postgres table partitioned by event_time. */
export function loadJob(name: string, opts: { from: string; table: string; mode?: string; requireComplete?: boolean }): string {
  return `${common(name)}source:
  kind: s3
  connection: lake
  path: ${JSON.stringify(opts.from)}
${opts.requireComplete === false ? '  require_complete: false\n' : ''}target:
  connection: warehouse
  table: ${opts.table}
  partition_column: event_time
  key: [event_id]
write_mode: ${opts.mode ?? 'overwrite-partition'}
validation:
  - name: records loaded
    source: records
    target: select count(*) as records from ${opts.table} where event_time >= :partition_start and event_time < :partition_end
`;
}
