/**
 * Snapshot before overwrite (docs/design.md §1, the manual checklist's first step) and its restore,
 * for either kind of target: an S3 partition by server-side copy, a Postgres partition into the
 * `backfill_runbook_snapshots` schema. Each snapshot and each restore is kept as evidence.
 */
import { checkJobSql } from '../sql/jobSql.ts';
import type { Partition } from '../../../shared/partitions.ts';
import type { Config, Job } from '../../../shared/schemas.ts';
import { InputError } from '../../../shared/errors.ts';
import type { EvidenceRecord, Store } from '../store/index.ts';
import { ClientPool } from '../targets/postgres/pool.ts';
import { backfillApplicationName } from '../targets/postgres/partitionTarget.ts';
import { postgresEndpoint } from '../runbook/prepare.ts';
import { openBucket } from '../targets/s3/open.ts';
import { mapLimit } from '../targets/s3/concurrency.ts';
import { renderPath, s3Url, snapshotPrefix } from '../targets/s3/paths.ts';
import { restoreS3Partition, snapshotS3Partition } from '../targets/s3/snapshot.ts';
import { PostgresSnapshots } from './postgres.ts';

export interface SnapshotScope {
  config: Config;
  job: Job;
  jobHash: string;
  planHash: string;
  runId: string;
  partitions: readonly Partition[];
  store: Store;
  env?: NodeJS.ProcessEnv;
  /** S3 copies in flight at once (default: the connection's) */
  concurrency?: number;
  actor?: string;
}

export interface PartitionSnapshotRow {
  partition: Partition;
  /** S3: objects copied; Postgres: rows copied */
  items: number;
  /** S3: bytes copied; Postgres: null */
  bytes: number | null;
  /** Postgres: md5 of the rows; S3: null (objects are checked by key and size) */
  checksum: string | null;
}

export interface SnapshotOutcome {
  target: 's3' | 'postgres';
  /** where the copies are: s3://bucket/_snapshots/<run>/ or backfill_runbook_snapshots."s_…" */
  location: string;
  partitions: PartitionSnapshotRow[];
  evidenceId: number;
  ms: number;
}

export interface SnapshotEvidenceBody {
  runId: string;
  jobName: string;
  jobHash: string;
  target: 's3' | 'postgres';
  location: string;
  partitions: { key: string; start: string; end: string; items: number; bytes: number | null; checksum: string | null }[];
}

export async function takeSnapshot(scope: SnapshotScope, onPartition?: (row: PartitionSnapshotRow) => void): Promise<SnapshotOutcome> {
  const started = Date.now();
  const { job, runId, partitions } = scope;
  // The snapshot runs none of the job's SQL, but a job that holds SQL which could write is
  // refused by every command alike (exit 2), before anything is copied.
  await checkJobSql(job);
  const env = scope.env ?? process.env;
  const rows: PartitionSnapshotRow[] = [];
  let location: string;
  if (job.target.kind === 's3') {
    const target = job.target;
    const bucket = openBucket(scope.config, target.connection, 'target.connection', env, scope.concurrency);
    location = s3Url(bucket.name, snapshotPrefix(runId));
    try {
      for (const partition of partitions) {
        const snap = await snapshotS3Partition(bucket, renderPath(target.path, partition.key, job.unit), runId, partition.key);
        const row = { partition, items: snap.objects.length, bytes: snap.objects.reduce((n, o) => n + o.size, 0), checksum: null };
        rows.push(row);
        onPartition?.(row);
      }
    } finally {
      bucket.close();
    }
  } else {
    const snaps = openPostgresSnapshots(scope.config, job, runId, env);
    try {
      await snaps.prepare(true);
      location = snaps.location;
      for (const partition of partitions) {
        const snap = await snaps.snapshot(partition);
        const row = { partition, items: snap.rows, bytes: null, checksum: snap.checksum };
        rows.push(row);
        onPartition?.(row);
      }
    } finally {
      await snaps.close();
    }
  }
  const body: SnapshotEvidenceBody = {
    runId,
    jobName: job.name,
    jobHash: scope.jobHash,
    target: job.target.kind === 's3' ? 's3' : 'postgres',
    location,
    partitions: rows.map((r) => ({
      key: r.partition.key,
      start: r.partition.start,
      end: r.partition.end,
      items: r.items,
      bytes: r.bytes,
      checksum: r.checksum,
    })),
  };
  const evidence = scope.store.evidence.add({
    runId: scope.store.runs.get(runId) ? runId : null,
    planHash: scope.planHash,
    kind: 'snapshot',
    body,
    actor: scope.actor,
  });
  return { target: body.target, location, partitions: rows, evidenceId: evidence.id, ms: Date.now() - started };
}

/** The latest snapshot on record for a run. */
export function findSnapshot(store: Store, runId: string): (EvidenceRecord & { body: SnapshotEvidenceBody }) | undefined {
  const all = store.evidence.list({ kind: 'snapshot' }).filter((e) => (e.body as Partial<SnapshotEvidenceBody> | null)?.runId === runId);
  return all.at(-1) as (EvidenceRecord & { body: SnapshotEvidenceBody }) | undefined;
}

export interface RestoreRow {
  partition: string;
  /** S3: objects put back; Postgres: rows put back */
  restored: number;
  /** S3: objects removed; Postgres: rows replaced */
  removed: number;
}

export async function restoreSnapshot(
  scope: Omit<SnapshotScope, 'partitions' | 'planHash' | 'jobHash'> & {
    snapshot: EvidenceRecord & { body: SnapshotEvidenceBody };
    partitionKey?: string;
  },
  onPartition?: (row: RestoreRow) => void,
): Promise<{ rows: RestoreRow[]; evidenceId: number; ms: number }> {
  const started = Date.now();
  const { job, runId, snapshot } = scope;
  const env = scope.env ?? process.env;
  const all = snapshot.body.partitions;
  const chosen = scope.partitionKey === undefined ? all : all.filter((p) => p.key === scope.partitionKey);
  if (chosen.length === 0) {
    throw new InputError(
      `the snapshot of run ${runId} has no partition ${JSON.stringify(scope.partitionKey)}; it has: ${all.map((p) => p.key).join(', ')}`,
      {
        field: '--partition',
        value: scope.partitionKey,
      },
    );
  }
  const rows: RestoreRow[] = [];
  if (job.target.kind === 's3') {
    const bucket = openBucket(scope.config, job.target.connection, 'target.connection', env, scope.concurrency);
    try {
      // partitions are independent; a few at a time, each one's own copies bounded by the bucket
      await mapLimit(chosen, 2, async (p) => {
        const r = await restoreS3Partition(bucket, runId, p.key);
        const row = { partition: p.key, restored: r.restored, removed: r.removed };
        rows.push(row);
        onPartition?.(row);
      });
    } finally {
      bucket.close();
    }
  } else {
    const snaps = openPostgresSnapshots(scope.config, job, runId, env);
    try {
      await snaps.prepare(false);
      for (const p of chosen) {
        const r = await snaps.restore({ key: p.key, start: p.start, end: p.end });
        const row = { partition: p.key, restored: r.rows, removed: r.replaced };
        rows.push(row);
        onPartition?.(row);
      }
    } finally {
      await snaps.close();
    }
  }
  rows.sort((a, b) => (a.partition < b.partition ? -1 : 1));
  const evidence = scope.store.evidence.add({
    runId: scope.store.runs.get(runId) ? runId : null,
    planHash: snapshot.planHash,
    kind: 'restore',
    body: { runId, snapshotEvidenceId: snapshot.id, target: snapshot.body.target, partitions: rows },
    actor: scope.actor,
  });
  return { rows, evidenceId: evidence.id, ms: Date.now() - started };
}

function openPostgresSnapshots(config: Config, job: Job, runId: string, env: NodeJS.ProcessEnv): PostgresSnapshots {
  const target = job.target;
  if (target.kind === 's3') throw new Error('not a Postgres target');
  const pg = postgresEndpoint(config, target.connection, 'target.connection', env);
  return new PostgresSnapshots(new ClientPool(pg.connection, pg.password, job.timezone, backfillApplicationName(job.name)), target, runId);
}
