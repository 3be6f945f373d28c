/**
 * Snapshot and restore of S3 partitions by server-side copy: no object's bytes pass through
 * this machine. A partition's objects (its manifest or marker included) are copied to
 * `_snapshots/<run id>/<original key>`, and a snapshot manifest listing what was copied is
 * written last; a restore copies them back, switches the partition's `_complete` last, removes
 * whatever the partition gained since, and checks the result key by key and size by size.
 */
import { InputError } from '../../../../shared/errors.ts';
import { canonicalJson } from '../../../../shared/canonicalJson.ts';
import type { S3Bucket } from './bucket.ts';
import { belongsTo, manifestKeyOf, snapshotManifestKey, snapshotObjectKey } from './paths.ts';

export const SNAPSHOT_FORMAT = 'backfill-runbook/s3-snapshot@1';

export interface S3Snapshot {
  format: typeof SNAPSHOT_FORMAT;
  run_id: string;
  partition: string;
  stem: string;
  objects: { key: string; size: number; etag: string }[];
  taken_at: string;
}

export interface S3RestoreOutcome {
  partition: string;
  restored: number;
  removed: number;
  bytes: number;
}

async function partitionObjects(bucket: S3Bucket, stem: string): Promise<{ key: string; size: number; etag: string }[]> {
  return (await bucket.listAll(stem)).filter((o) => belongsTo(stem, o.key)).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

export async function snapshotS3Partition(bucket: S3Bucket, stem: string, runId: string, partitionKey: string): Promise<S3Snapshot> {
  const objects = await partitionObjects(bucket, stem);
  await bucket.copyMany(objects.map((o) => ({ from: o.key, to: snapshotObjectKey(runId, o.key) })));
  const snapshot: S3Snapshot = {
    format: SNAPSHOT_FORMAT,
    run_id: runId,
    partition: partitionKey,
    stem,
    objects,
    taken_at: new Date().toISOString(),
  };
  // written last: a snapshot without its manifest is incomplete and is never restored from
  await bucket.put(snapshotManifestKey(runId, partitionKey), `${canonicalJson(snapshot)}\n`);
  return snapshot;
}

export async function readS3Snapshot(bucket: S3Bucket, runId: string, partitionKey: string): Promise<S3Snapshot> {
  const key = snapshotManifestKey(runId, partitionKey);
  const text = await bucket.getText(key);
  if (text === null) {
    throw new InputError(
      `no snapshot of partition ${partitionKey} for run ${runId}: ${bucket.url(key)} does not exist (was the snapshot interrupted? take it again)`,
      {
        field: '--partition',
        value: partitionKey,
      },
    );
  }
  const parsed = JSON.parse(text) as S3Snapshot;
  if (parsed.format !== SNAPSHOT_FORMAT) throw new InputError(`${bucket.url(key)} is not a snapshot manifest`, { value: key });
  return parsed;
}

export async function restoreS3Partition(bucket: S3Bucket, runId: string, partitionKey: string): Promise<S3RestoreOutcome> {
  const snapshot = await readS3Snapshot(bucket, runId, partitionKey);
  const { stem } = snapshot;
  const marker = manifestKeyOf(stem);
  const kept = new Set(snapshot.objects.map((o) => o.key));
  const gained = (await partitionObjects(bucket, stem)).filter((o) => !kept.has(o.key)).length;
  // 1. data back under their own names (content-named objects are never a different content)
  await bucket.copyMany(
    snapshot.objects.filter((o) => o.key !== marker).map((o) => ({ from: snapshotObjectKey(runId, o.key), to: o.key })),
  );
  // 2. the partition's `_complete` switches back last (or goes, if there was none): readers
  //    that follow it see the partition as it was, never a mix
  if (kept.has(marker)) await bucket.copy(snapshotObjectKey(runId, marker), marker);
  else await bucket.deleteKeys([marker]);
  // 3. what the partition gained since the snapshot goes
  const now = await partitionObjects(bucket, stem);
  const extra = now.filter((o) => !kept.has(o.key)).map((o) => o.key);
  await bucket.deleteKeys(extra);
  // 4. exactly as it was: same keys, same sizes
  const after = await partitionObjects(bucket, stem);
  const want = snapshot.objects.map((o) => `${o.key} ${o.size}`).join('\n');
  const got = after.map((o) => `${o.key} ${o.size}`).join('\n');
  if (want !== got) throw new Error(`restore of ${bucket.url(stem)} did not match its snapshot: expected\n${want}\ngot\n${got}`);
  return {
    partition: partitionKey,
    restored: snapshot.objects.length,
    removed: Math.max(gained, extra.length),
    bytes: snapshot.objects.reduce((n, o) => n + o.size, 0),
  };
}
