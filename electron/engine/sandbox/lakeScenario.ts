/**
 * Scenario 3: hours of raw events missing from the lake (seed 000's Amplitude gap). The raw
 * hourly exports for two hours never arrived, so the refined layer (Parquet, made by a SQL
 * refine step) has a hole. The trainee re-exports them — into the backfill prefix, not the
 * automated one the daily ETL reads — and refines them hour by hour. "Fixed" is checked object
 * by object and row by row: each refined row equals the source event, derived columns included.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { LakeSession } from '../targets/s3/lakeSession.ts';
import { readerSql, DEFAULT_CSV } from '../targets/s3/lakeSql.ts';
import { stageObjects } from '../targets/s3/stage.ts';
import { REFINE_SQL } from './jobs.ts';
import { query } from '../targets/postgres/connect.ts';
import type { S3Bucket } from '../targets/s3/bucket.ts';
import { parseManifest } from '../targets/s3/manifest.ts';
import { manifestKeyOf } from '../targets/s3/paths.ts';
import { readRecords } from '../targets/s3/records.ts';
import type { PgClient } from '../targets/postgres/connect.ts';
import { succeededRun, type ScenarioCheck } from './checks.ts';
import type { Scenario } from './scenarios.ts';

const DAY = '2026-07-14';
const MISSING = ['18', '19'];
const HOURS = Array.from({ length: 24 }, (_, h) => String(h).padStart(2, '0'));
const raw = (h: string): string => `events/events_${DAY}_${h}`;
const recovered = (h: string): string => `events-backfill/events-backfill_${DAY}_${h}`;
const refined = (h: string): string => `refined/event/dt=${DAY}/hour=${h}/`;
const RANGE = { from: `${DAY}T${MISSING[0]}`, to: `${DAY}T${String(Number(MISSING.at(-1)) + 1).padStart(2, '0')}` };
export const NO_LAKE =
  'this sandbox has no lake (S3 server): it was started by an older build — restart it (run-backfill sandbox down, then up)';

/** What the daily export and the daily ETL left in the lake: every hour of the day but the missing ones. */
function seededKeys(): { raw: string[]; refined: string[] } {
  const present = HOURS.filter((h) => !MISSING.includes(h));
  return {
    raw: present.flatMap((h) => [`${raw(h)}#0.json.gz`, manifestKeyOf(raw(h))]),
    refined: present.flatMap((h) => [`${refined(h)}part-00000.parquet`, `${refined(h)}_SUCCESS`]),
  };
}

async function eventsOfHour(client: PgClient, hour: string): Promise<{ ids: string[]; lines: string[] }> {
  const from = `${DAY}T${hour}:00:00Z`;
  const to = new Date(Date.parse(from) + 3_600_000).toISOString();
  const r = await query<{ id: string; j: string }>(
    client,
    `SELECT e.event_id::text AS id, row_to_json(e)::text AS j
       FROM (SELECT event_id, user_id, event_type, event_time, amount FROM app_events
              WHERE event_time >= CAST(:from AS timestamptz) AND event_time < CAST(:to AS timestamptz)) AS e
      ORDER BY e.event_id`,
    { from, to },
  );
  return { ids: r.rows.map((row) => row.id), lines: r.rows.map((row) => row.j) };
}

async function inject({ client, lake }: { client: PgClient; lake: S3Bucket | null }): Promise<void> {
  if (!lake) throw new Error(NO_LAKE);
  await lake.deleteKeys((await lake.listAll('')).map((o) => o.key));
  for (const h of HOURS.filter((hour) => !MISSING.includes(hour))) {
    const body = gzipSync(`${(await eventsOfHour(client, h)).lines.join('\n')}\n`);
    // the vendor's hourly export, then what the daily ETL made of it
    await lake.put(`${raw(h)}#0.json.gz`, body, 'application/gzip');
    await lake.put(manifestKeyOf(raw(h)), Buffer.alloc(0), 'text/plain');
    await lake.put(`${refined(h)}part-00000.parquet`, await refineHour(body, h), 'application/vnd.apache.parquet');
    await lake.put(`${refined(h)}_SUCCESS`, Buffer.alloc(0), 'text/plain');
  }
}

const JSONL = {
  format: 'jsonl' as const,
  compression: 'gzip' as const,
  csv: DEFAULT_CSV,
  parquet: { codec: 'zstd' as const, rowGroupSize: 122_880 },
};
const PARQUET = { ...JSONL, format: 'parquet' as const, compression: undefined };

/** What the daily ETL made of one raw hour: the refine job's own SQL, as Parquet. */
async function refineHour(rawGzip: Buffer, hour: string): Promise<Buffer> {
  const dir = mkdtempSync(join(tmpdir(), 'bfr-sandbox-refine-'));
  const session = await LakeSession.open(dir, 'UTC');
  try {
    writeFileSync(join(dir, 'raw.json.gz'), rawGzip);
    await session.view('source', readerSql([join(dir, 'raw.json.gz')], JSONL));
    const start = `${DAY}T${hour}:00:00Z`;
    const values = { partition_start: start, partition_end: new Date(Date.parse(start) + 3_600_000).toISOString(), run_id: 'daily-etl' };
    const select = await session.userSelect(REFINE_SQL, 'refine', values);
    await session.copyUserSelect(select, join(dir, 'out.parquet'), 'FORMAT parquet, COMPRESSION zstd', 'refine', REFINE_SQL);
    return await readFile(join(dir, 'out.parquet'));
  } finally {
    session.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface RefinedRow {
  event_id: string;
  event_type: string;
  amount: string;
  event_date: string;
  event_hour: string;
}

/** The refined rows of a published partition, read from the Parquet objects its manifest lists. */
async function refinedRows(lake: S3Bucket, stem: string): Promise<RefinedRow[] | null> {
  const manifest = parseManifest((await lake.getText(manifestKeyOf(stem))) ?? '');
  if (!manifest) return null;
  const dir = mkdtempSync(join(tmpdir(), 'bfr-sandbox-check-'));
  const session = await LakeSession.open(dir, 'UTC');
  try {
    const staged = await stageObjects(lake, manifest.objects, join(dir, 'target'));
    if (staged.length === 0) return [];
    await session.view(
      'target',
      readerSql(
        staged.map((o) => o.file),
        PARQUET,
      ),
    );
    return (await session.rows(
      `SELECT CAST(event_id AS VARCHAR) AS event_id, event_type, CAST(amount AS VARCHAR) AS amount, CAST(event_date AS VARCHAR) AS event_date, CAST(event_hour AS VARCHAR) AS event_hour FROM target ORDER BY event_id`,
    )) as unknown as RefinedRow[];
  } finally {
    session.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What each refined row of an hour must be, from the source events. */
async function expectedRows(client: PgClient, hour: string): Promise<RefinedRow[]> {
  const from = `${DAY}T${hour}:00:00Z`;
  const r = await query<RefinedRow>(
    client,
    `SELECT event_id::text AS event_id, lower(event_type) AS event_type, amount::text AS amount,
            to_char(event_time AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS event_date, extract(hour FROM event_time AT TIME ZONE 'UTC')::int::text AS event_hour
       FROM app_events WHERE event_time >= CAST(:from AS timestamptz) AND event_time < CAST(:from AS timestamptz) + interval '1 hour'
      ORDER BY event_id::text`,
    { from },
  );
  return r.rows;
}

/** The event ids in a published partition, read from the objects its manifest lists. */
async function publishedIds(lake: S3Bucket, stem: string): Promise<{ ids: string[]; records: number } | null> {
  const manifest = parseManifest((await lake.getText(manifestKeyOf(stem))) ?? '');
  if (!manifest) return null;
  const ids: string[] = [];
  const counts = { objects: 0, bytes: 0, records: 0 };
  for await (const line of readRecords(lake, manifest.objects, undefined, counts))
    ids.push(String((JSON.parse(line) as { event_id?: unknown }).event_id));
  return { ids, records: manifest.records };
}

function sameKeys(name: string, found: string[], expected: string[], what: string): ScenarioCheck {
  const extra = found.filter((k) => !expected.includes(k));
  const missing = expected.filter((k) => !found.includes(k));
  const ok = extra.length === 0 && missing.length === 0;
  const detail = ok
    ? `${found.length} objects, exactly as the daily pipeline left them`
    : [
        extra.length > 0 ? `${extra.length} object(s) appeared (${extra.slice(0, 3).join(', ')}${extra.length > 3 ? ', …' : ''})` : '',
        missing.length > 0 ? `${missing.length} object(s) gone (${missing.slice(0, 3).join(', ')})` : '',
        what,
      ]
        .filter(Boolean)
        .join('; ');
  return { name, ok, detail };
}

async function check({ client, lake, store, since }: Parameters<Scenario['check']>[0]): Promise<ScenarioCheck[]> {
  if (!lake) return [{ name: 'the sandbox has a lake', ok: false, detail: NO_LAKE }];
  const checks: ScenarioCheck[] = [];
  for (const h of MISSING) {
    const expected = await eventsOfHour(client, h);
    const back = await publishedIds(lake, recovered(h));
    checks.push(
      back && back.records === expected.ids.length
        ? {
            name: `hour ${h} recovered into the backfill prefix`,
            ok: true,
            detail: `${back.records} events under ${lake.url(recovered(h))}…`,
          }
        : {
            name: `hour ${h} recovered into the backfill prefix`,
            ok: false,
            detail: back
              ? `${back.records} events recovered, the source has ${expected.ids.length}`
              : `nothing published under ${lake.url(recovered(h))}…: run raw-events-recover with target.path in the backfill prefix`,
          },
    );
    const out = await refinedRows(lake, refined(h));
    const want = await expectedRows(client, h);
    const got = new Map((out ?? []).map((r) => [r.event_id, r]));
    const missing = want.filter((r) => !got.has(r.event_id)).length;
    const doubled = (out?.length ?? 0) - got.size;
    const wrong = want.filter((r) => {
      const g = got.get(r.event_id);
      return (
        g !== undefined &&
        (g.event_type !== r.event_type ||
          Number(g.amount ?? 0) !== Number(r.amount ?? 0) ||
          g.event_date !== r.event_date ||
          g.event_hour !== r.event_hour)
      );
    }).length;
    const extra = got.size - (want.length - missing);
    const ok = out !== null && missing === 0 && doubled === 0 && wrong === 0 && extra === 0;
    checks.push({
      name: `refined hour ${h} holds each event exactly once, refined`,
      ok,
      detail: ok
        ? `${got.size} refined rows, none missing, none twice, each equal to its source event`
        : out === null
          ? `no published partition under ${lake.url(refined(h))}: run raw-events-refined over the recovered hours`
          : `${missing} event(s) missing, ${doubled} twice, ${extra} not in the source, ${wrong} with a wrong value`,
    });
  }
  const seeded = seededKeys();
  checks.push(
    sameKeys(
      'the automated prefix was left alone',
      (await lake.listAll('events/')).map((o) => o.key),
      seeded.raw,
      'the daily ETL reads events/ and would process backfill objects there a second time',
    ),
  );
  const otherRefined = (await lake.listAll(`refined/event/dt=${DAY}/`))
    .map((o) => o.key)
    .filter((k) => !MISSING.some((h) => k.startsWith(refined(h))));
  checks.push(
    sameKeys('the other refined hours were left alone', otherRefined, seeded.refined, 'only the missing hours were to be written'),
  );
  checks.push(succeededRun(store, 'raw-events-recover', RANGE, since), succeededRun(store, 'raw-events-refined', RANGE, since));
  return checks;
}

export const LAKE_SCENARIO: Scenario = {
  id: 3,
  slug: 's3-missing-hours',
  title: 'Hours of raw events missing from S3',
  story:
    "The analytics vendor's hourly exports for 2026-07-14 18:00 and 19:00 (UTC) never arrived in the lake, so the refined layer has a two-hour hole. The vendor can export those hours again (here the warehouse's app_events table plays the vendor). The recovered files must land under the backfill prefix — never under events/, where the daily ETL would pick them up and process them a second time — and then be refined hour by hour into refined/event/.",
  job: 'raw-events-refined',
  range: RANGE,
  steps: [
    `run-backfill raw-events-recover --from ${RANGE.from} --to ${RANGE.to}   (read why it is refused)`,
    'edit jobs/raw-events-recover.yaml: set target.path to the backfill path the refusal names',
    `run-backfill raw-events-recover --from ${RANGE.from} --to ${RANGE.to}`,
    `run-backfill raw-events-refined --from ${RANGE.from} --to ${RANGE.to} --dry-run`,
    `run-backfill raw-events-refined --from ${RANGE.from} --to ${RANGE.to}`,
  ],
  fixed:
    'Both hours are recovered under the backfill prefix, the refined layer holds each of their events exactly once, the automated prefix and the other refined hours are untouched, and both runs succeeded.',
  inject,
  check,
};
