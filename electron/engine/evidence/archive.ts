/**
 * A run archive (`.bfr`): one gzip'd JSON file with the run's bundle and its raw ledger rows,
 * so another machine can review the run offline. Import verifies the bundle AND that every
 * ledger row says what the bundle says, before a single row is written.
 */
import { gzipSync } from 'node:zlib';
import { z } from 'zod';
import { canonicalJson } from '../../../shared/canonicalJson.ts';
import { GateError, InputError } from '../../../shared/errors.ts';
import { LIMITS } from '../../../shared/limits.ts';
import { gunzipBounded } from '../input/boundedGunzip.ts';
import { parseBoundedJson } from '../input/boundedJson.ts';
import type { Store } from '../store/index.ts';
import { canonicalJson as storeJson } from '../store/json.ts';
import {
  settingsFromJson,
  settingsToJson,
  toPartition,
  toPlan,
  toRun,
  type PartitionRow,
  type PlanRow,
  type RunRow,
} from '../store/rows.ts';
import type { NoteBundle } from './bundle.ts';
import type { Trust } from './trust.ts';
import { VERDICT_WORD } from './verdict.ts';
import { verifyBundle, type BundleVerification } from './verifyBundle.ts';

export const ARCHIVE_FORMAT = 'backfill-runbook/archive@1';

type Row = Record<string, unknown>;

export interface RunArchive {
  format: typeof ARCHIVE_FORMAT;
  bundle: NoteBundle;
  ledger: { runs: Row[]; partitions: Row[]; plans: Row[]; jobs: Row[] };
}

export function buildArchive(store: Store, bundle: NoteBundle): Buffer {
  const rows = (sql: string, ...params: unknown[]) => store.db.prepare<unknown[], Row>(sql).all(...params);
  const run = bundle.run[0] as { runId: string; planHash: string; jobName: string; jobHash: string } | undefined;
  if (!run) throw new InputError(`the bundle of ${bundle.runId} has no run`);
  const archive: RunArchive = {
    format: ARCHIVE_FORMAT,
    bundle,
    ledger: {
      runs: rows('SELECT * FROM runs WHERE run_id = ?', run.runId),
      partitions: rows('SELECT * FROM partitions WHERE run_id = ? ORDER BY seq', run.runId),
      plans: rows('SELECT * FROM plans WHERE plan_hash = ?', run.planHash),
      jobs: rows('SELECT * FROM jobs WHERE name = ? AND job_hash = ?', run.jobName, run.jobHash),
    },
  };
  return gzipSync(Buffer.from(JSON.stringify(archive), 'utf8'));
}

export function isArchive(data: Buffer): boolean {
  return data.length > 2 && data[0] === 0x1f && data[1] === 0x8b;
}

const rows = z.array(z.record(z.string(), z.unknown()));
const archiveSchema = z.object({
  format: z.literal(ARCHIVE_FORMAT),
  bundle: z.record(z.string(), z.unknown()),
  ledger: z.object({ runs: rows, partitions: rows, plans: rows, jobs: rows }),
});

/**
 * Decompresses (stopping at LIMITS.archiveJsonBytes, never inflating a bomb) and checks the
 * archive's shape; the bundle inside is judged by verifyBundle.
 */
export async function readArchive(data: Buffer, file: string): Promise<RunArchive> {
  const json = await gunzipBounded(data, { file, what: 'run archive once decompressed', limit: LIMITS.archiveJsonBytes });
  const parsed = parseBoundedJson(json.toString('utf8'), { file, what: 'run archive' });
  const archive = archiveSchema.safeParse(parsed);
  if (!archive.success) {
    const issue = archive.error.issues[0];
    const field = issue?.path.join('.') ?? '';
    throw new InputError(`${file} is not a run archive: field "${field}" ${issue?.message ?? 'is invalid'}`, { file, field });
  }
  return archive.data as unknown as RunArchive;
}

/** The bundle's verification, with the ledger rows held to it: a row that differs is BROKEN. */
export function verifyArchive(archive: RunArchive, trust: Trust): BundleVerification {
  const result = verifyBundle(archive.bundle, trust);
  if (result.chain === null) return result; // not a bundle: the ledger cannot be compared with it
  const ledger = ledgerProblems(archive);
  if (ledger.length === 0) return result;
  const broken = [...result.broken, ...ledger];
  return { ...result, verdict: 'broken', ok: false, broken, problems: [...broken, ...result.untrusted, ...result.signoff.problems] };
}

/** Ledger rows that say something else than the (verified) bundle; a malformed row is one of them. */
export function ledgerProblems(archive: RunArchive): string[] {
  try {
    return compareLedger(archive);
  } catch (err) {
    // A crafted row (settings_json that is not JSON, a number where text belongs) is a difference, not a crash.
    return [`the ledger rows are malformed: ${err instanceof Error ? err.message : String(err)}`];
  }
}

function compareLedger(archive: RunArchive): string[] {
  const { bundle, ledger } = archive;
  const same = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b);
  const problems: string[] = [];
  const run = ledger.runs[0];
  if (ledger.runs.length !== 1 || !run) problems.push(`the archive holds ${ledger.runs.length} run rows, expected 1`);
  else if (
    !same(
      { ...toRun(run as unknown as RunRow), leaseOwner: null, leaseExpiresAt: null },
      { ...bundle.run[0], leaseOwner: null, leaseExpiresAt: null },
    )
  ) {
    problems.push('ledger row of run differs from the run in the bundle');
  }
  if (run && !storedAsWritten(run.settings_json, (t) => settingsToJson(settingsFromJson(t))))
    problems.push('ledger row of run: settings_json is not what the store writes for those settings');
  for (const p of ledger.partitions)
    for (const column of ['source_sums_json', 'target_sums_json'])
      if (p[column] !== null && !storedAsWritten(p[column], (t) => storeJson(JSON.parse(t))))
        problems.push(`ledger row of partition ${String(p.partition_key)}: ${column} is not what the store writes for those sums`);
  const partitions = ledger.partitions.map((p) => toPartition(p as unknown as PartitionRow));
  partitions.forEach((p, i) => {
    if (!same(p, bundle.partitions[i])) problems.push(`ledger row of partition ${p.key} differs from the bundle`);
  });
  if (partitions.length !== bundle.partitions.length)
    problems.push(`the ledger has ${partitions.length} partitions, the bundle ${bundle.partitions.length}`);
  if (ledger.plans.length !== bundle.plan.length)
    problems.push(`the ledger has ${ledger.plans.length} plan rows, the bundle ${bundle.plan.length}`);
  if (ledger.jobs.length !== bundle.job.length)
    problems.push(`the ledger has ${ledger.jobs.length} job rows, the bundle ${bundle.job.length}`);
  for (const plan of ledger.plans) {
    if (!same(toPlan(plan as unknown as PlanRow), bundle.plan[0])) problems.push('ledger row of the plan differs from the bundle');
  }
  for (const job of ledger.jobs) {
    // source_file and updated_at say where and when the job file was read on the original machine: not evidence.
    if (
      job.name !== bundle.run[0]?.jobName ||
      job.job_hash !== bundle.job[0]?.jobHash ||
      !same(JSON.parse(String(job.definition_json)), bundle.job[0]?.definition)
    )
      problems.push('ledger row of the job differs from the bundle');
  }
  return problems;
}

/**
 * Writes an archive's run into this store for review — only when it verifies INTACT (verify's
 * own verdict, against `verification`'s trust); refuses a run id already here. **Important**:
 * the check is here, not in a caller, so no path can store an archive that did not verify.
 */
export function importArchive(
  store: Store,
  archive: RunArchive,
  verification: BundleVerification,
  actor: string,
): { runId: string; evidence: number } {
  if (verification.verdict !== 'intact')
    throw new GateError(
      `the archive of ${archive.bundle.runId} is ${VERDICT_WORD[verification.verdict]}, so nothing was imported`,
      verification.problems,
    );
  const { bundle, ledger } = archive;
  const runId = bundle.runId;
  if (store.runs.get(runId)) {
    throw new InputError(`run "${runId}" already exists in ${store.file}: an archive is imported into a database that does not have it`, {
      value: runId,
    });
  }
  const columns = (table: string) =>
    new Set(
      store.db
        .prepare<[], { name: string }>(`SELECT name FROM pragma_table_info('${table}')`)
        .all()
        .map((c) => c.name),
    );
  const insert = (table: 'runs' | 'partitions' | 'plans' | 'jobs', row: Row, ignore = false) => {
    const known = columns(table);
    const names = Object.keys(row).filter((n) => known.has(n));
    store.db
      .prepare(`INSERT ${ignore ? 'OR IGNORE ' : ''}INTO ${table} (${names.join(', ')}) VALUES (${names.map((n) => `@${n}`).join(', ')})`)
      .run(Object.fromEntries(names.map((n) => [n, row[n]])));
  };
  return store.transaction(() => {
    for (const plan of ledger.plans) insert('plans', plan, true);
    for (const job of ledger.jobs) if (!store.jobs.get(String(job.name))) insert('jobs', job);
    for (const run of ledger.runs) insert('runs', { ...run, lease_owner: null, lease_expires_at: null });
    for (const p of ledger.partitions) insert('partitions', p);
    let evidence = 0;
    for (const e of bundle.evidence) {
      const added = store.evidence.add({
        runId: e.runId === runId ? runId : null,
        planHash: e.planHash,
        kind: e.kind,
        body: JSON.parse(e.bodyJson) as unknown,
        actor,
      });
      if (added.bodySha256 !== e.bodySha256)
        throw new InputError(`evidence #${e.id} of the archive did not store byte for byte (sha256 ${added.bodySha256} ≠ ${e.bodySha256})`);
      evidence += 1;
    }
    const head = bundle.audit.at(-1);
    const manifestSha256 = typeof head?.detail.manifestSha256 === 'string' ? head.detail.manifestSha256 : '';
    store.db
      .prepare(
        'INSERT INTO imported_archives (run_id, manifest_sha256, head_seq, head_hash, archive_json, verification_json, imported_at, imported_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(
        runId,
        manifestSha256,
        head?.seq ?? 0,
        head?.hash ?? '',
        JSON.stringify(archive),
        JSON.stringify(verification),
        new Date().toISOString(),
        actor,
      );
    store.audit.append({
      runId,
      entity: 'run',
      entityId: runId,
      event: 'archive.imported',
      actor,
      detail: { manifestSha256, headSeq: head?.seq ?? null, headHash: head?.hash ?? null, signedHead: verification.signedHead, evidence },
    });
    return { runId, evidence };
  });
}

/**
 * A JSON text column holds exactly what the store would write for the value it reads as: a
 * row whose text reads the same but is stored otherwise (0 for "{}") would be imported as is.
 */
function storedAsWritten(text: unknown, rewrite: (text: string) => string): boolean {
  return typeof text === 'string' && rewrite(text) === text;
}
