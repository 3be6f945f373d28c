/**
 * The S3 side effects of partition writes, recorded in the local store before they happen
 * (migration 003), and a lock per S3 partition for writers on this machine.
 *
 * Rules, which make a crash at any instant recoverable:
 *   - an object is recorded before it is written; once the partition's manifest settles, the
 *     record is dropped; a recorded object that no manifest lists is deleted on cleanup;
 *   - objects of an earlier publish are recorded before the new manifest is written, so if the
 *     process dies after the manifest lands, cleanup still deletes them;
 *   - a multipart upload is recorded the moment its id is known and aborted on cleanup.
 */
import { hostname } from 'node:os';
import type { Store } from '../../store/index.ts';
import { translateSqliteError } from '../../store/errors.ts';

export interface S3Effect {
  id: number;
  runId: string;
  partitionKey: string;
  bucket: string;
  stem: string;
  kind: 'object' | 'upload';
  objectKey: string;
  uploadId: string | null;
}

interface EffectRow {
  id: number;
  run_id: string;
  partition_key: string;
  bucket: string;
  stem: string;
  kind: 'object' | 'upload';
  object_key: string;
  upload_id: string | null;
}

const LOCK_MS = 15 * 60_000;

export class S3Ledger {
  readonly owner = `${hostname()}:${process.pid}`;
  private readonly stmt;

  constructor(private readonly store: Store) {
    const db = store.db;
    this.stmt = {
      add: db.prepare<{
        runId: string;
        partitionKey: string;
        bucket: string;
        stem: string;
        kind: string;
        objectKey: string;
        uploadId: string | null;
        now: string;
      }>(
        `INSERT INTO s3_effects (run_id, partition_key, bucket, stem, kind, object_key, upload_id, created_at)
         VALUES (@runId, @partitionKey, @bucket, @stem, @kind, @objectKey, @uploadId, @now)`,
      ),
      forStem: db.prepare<[string, string], EffectRow>('SELECT * FROM s3_effects WHERE bucket = ? AND stem = ? ORDER BY id'),
      forBucket: db.prepare<[string], EffectRow>('SELECT * FROM s3_effects WHERE bucket = ? ORDER BY id'),
      remove: db.prepare<[number]>('DELETE FROM s3_effects WHERE id = ?'),
      lock: db.prepare<{ bucket: string; stem: string; runId: string; owner: string; expires: string; now: string }>(
        `INSERT INTO s3_partition_locks (bucket, stem, run_id, owner, expires_at) VALUES (@bucket, @stem, @runId, @owner, @expires)
         ON CONFLICT (bucket, stem) DO UPDATE SET run_id = excluded.run_id, owner = excluded.owner, expires_at = excluded.expires_at
         WHERE s3_partition_locks.owner = excluded.owner OR s3_partition_locks.expires_at <= @now`,
      ),
      lockHolder: db.prepare<[string, string], { owner: string; run_id: string; expires_at: string }>(
        'SELECT owner, run_id, expires_at FROM s3_partition_locks WHERE bucket = ? AND stem = ?',
      ),
      unlock: db.prepare<[string, string, string]>('DELETE FROM s3_partition_locks WHERE bucket = ? AND stem = ? AND owner = ?'),
      forceUnlock: db.prepare<[string, string]>('DELETE FROM s3_partition_locks WHERE bucket = ? AND stem = ?'),
    };
  }

  private guard<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      throw translateSqliteError(err, this.store.file);
    }
  }

  recordObject(runId: string, partitionKey: string, bucket: string, stem: string, objectKey: string): void {
    this.guard(() =>
      this.stmt.add.run({ runId, partitionKey, bucket, stem, kind: 'object', objectKey, uploadId: null, now: new Date().toISOString() }),
    );
  }

  recordUpload(runId: string, partitionKey: string, bucket: string, stem: string, objectKey: string, uploadId: string): void {
    this.guard(() =>
      this.stmt.add.run({ runId, partitionKey, bucket, stem, kind: 'upload', objectKey, uploadId, now: new Date().toISOString() }),
    );
  }

  effectsOf(bucket: string, stem: string): S3Effect[] {
    return this.guard(() => this.stmt.forStem.all(bucket, stem).map(toEffect));
  }

  /** Every recorded effect in the bucket whose run is not being executed right now. */
  abandonedEffects(bucket: string): S3Effect[] {
    return this.guard(() => this.stmt.forBucket.all(bucket).map(toEffect)).filter((e) => !this.runIsLive(e.runId));
  }

  forget(ids: readonly number[]): void {
    this.guard(() => this.store.transaction(() => ids.forEach((id) => this.stmt.remove.run(id))));
  }

  /** True when this process now holds the partition; false when a live writer does. */
  lock(bucket: string, stem: string, runId: string): boolean {
    return this.guard(() => {
      const now = new Date();
      const args = {
        bucket,
        stem,
        runId,
        owner: this.owner,
        expires: new Date(now.getTime() + LOCK_MS).toISOString(),
        now: now.toISOString(),
      };
      if (this.stmt.lock.run(args).changes === 1) return true;
      const holder = this.stmt.lockHolder.get(bucket, stem);
      if (holder && !ownerAlive(holder.owner)) {
        this.stmt.forceUnlock.run(bucket, stem);
        return this.stmt.lock.run(args).changes === 1;
      }
      return false;
    });
  }

  lockHolder(bucket: string, stem: string): string | undefined {
    const h = this.guard(() => this.stmt.lockHolder.get(bucket, stem));
    return h ? `run ${h.run_id} (${h.owner})` : undefined;
  }

  unlock(bucket: string, stem: string): void {
    this.guard(() => this.stmt.unlock.run(bucket, stem, this.owner));
  }

  /** A run whose lease is held by a process that still exists is being executed. */
  private runIsLive(runId: string): boolean {
    const run = this.store.runs.get(runId);
    if (!run?.leaseOwner || !run.leaseExpiresAt || run.leaseExpiresAt <= new Date().toISOString()) return false;
    return ownerAlive(run.leaseOwner);
  }
}

/** `host:pid[:…]`: alive unless it is this machine's and the process is gone. */
function ownerAlive(owner: string): boolean {
  const [host, pid] = owner.split(':');
  if (host !== hostname() || !pid) return true;
  if (Number(pid) === process.pid) return true;
  try {
    process.kill(Number(pid), 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function toEffect(r: EffectRow): S3Effect {
  return {
    id: r.id,
    runId: r.run_id,
    partitionKey: r.partition_key,
    bucket: r.bucket,
    stem: r.stem,
    kind: r.kind,
    objectKey: r.object_key,
    uploadId: r.upload_id,
  };
}
