/**
 * The publish protocol of an S3 partition. S3 has no transactions; this is what stands in for
 * one (docs/design.md §6 for S3):
 *
 *   1. Lock the partition on this machine (ledger), list what it holds now (while step 2
 *      reads its source; before its first upload).
 *   2. Write the new data objects. Each name is derived from the partition and the object's
 *      content (`…_19#0.<sha256>.json.gz`), recorded in the ledger BEFORE it is written, and a
 *      multipart upload's id is recorded the moment S3 hands it out. New content never lands
 *      on a key an existing manifest lists.
 *   3. Validate: records written = records read, every object's size as uploaded, the job's
 *      rules. A failure stops here — nothing is published.
 *   4. Record the earlier publish's objects in the ledger, then write ONE `_complete` manifest
 *      (keys, sizes, sha256s, record count, run id, plan hash) in a single PUT. That PUT is
 *      the commit: the partition is published exactly when its manifest exists, and a reader
 *      that follows the manifest sees the old partition or the new one, never a mix.
 *   5. Only now delete the earlier publish's objects that the new manifest does not list.
 *
 * Cleanup (on failure, and for runs that died) deletes every recorded object that the
 * partition's CURRENT manifest does not list and aborts every recorded upload. Before step 4
 * that removes the new objects; after it, the old ones — so a crash at any instant ends, after
 * resume, with the partition published once and nothing left behind. A resume finds published
 * partitions by their manifests (readMarks).
 *
 * **Hazard**: the lock is per machine (the local store). Two machines writing the same S3
 * partition at once are not prevented; run one executor per target location.
 */
import type { Partition } from '../../../../shared/partitions.ts';
import { AbortedError, PartitionBusyError } from '../../executor/errors.ts';
import type { PartitionWriteResult } from '../../executor/types.ts';
import type { S3Bucket } from './bucket.ts';
import type { S3Ledger } from './ledger.ts';
import {
  MANIFEST_FORMAT,
  parseManifest,
  partitionChecksum,
  serializeManifest,
  type ManifestObject,
  type PartitionManifest,
} from './manifest.ts';
import type { ObjectLabels } from './partWriter.ts';
import { belongsTo, manifestKeyOf } from './paths.ts';
import type { SourceCounts } from './sources.ts';

/** What a writer must call around each object it writes: the ledger hears of it first. */
export interface WriteHooks {
  beforeWrite(key: string): void;
  onUploadId(key: string, uploadId: string): void;
  /** The size of `key` in the partition as step 1 listed it (before this write), or undefined. */
  existing(key: string): Promise<number | undefined>;
}

export interface PublishRequest {
  bucket: S3Bucket;
  ledger: S3Ledger;
  stem: string;
  partition: Partition;
  runId: string;
  planHash: string;
  attempt: number;
  signal: AbortSignal;
  /** tags and metadata of every object written, the manifest included */
  labels: ObjectLabels;
  /** Step 2: writes the data objects through `hooks`; returns them and what was read. */
  write(hooks: WriteHooks): Promise<{ objects: ManifestObject[]; counts: SourceCounts }>;
  /** Step 3: throws PartitionValidationError when the partition must not be published. */
  validate(objects: ManifestObject[], counts: SourceCounts): Promise<PartitionWriteResult>;
  onValidated(result: PartitionWriteResult): void;
}

export async function publishPartition(req: PublishRequest): Promise<{ result: PartitionWriteResult; manifest: PartitionManifest }> {
  const { bucket, ledger, stem, partition, runId } = req;
  if (!ledger.lock(bucket.name, stem, runId)) {
    throw new PartitionBusyError(
      `partition ${partition.key} at ${bucket.url(stem)} is being written by ${ledger.lockHolder(bucket.name, stem) ?? 'another run'}`,
    );
  }
  try {
    await cleanupPartition(bucket, ledger, stem);
    // Step 1's listing travels while the writer reads its source. A writer awaits it before its
    // first upload (`existing`), so it never holds this attempt's own objects; and were it to,
    // they are in the new manifest, which is what keeps an object from being deleted.
    const listing = bucket.listAll(stem).then((all) => new Map(all.filter((o) => belongsTo(stem, o.key)).map((o) => [o.key, o.size])));
    listing.catch(() => undefined); // thrown below, where it is awaited
    const { objects, counts } = await req.write({
      beforeWrite: (key) => ledger.recordObject(runId, partition.key, bucket.name, stem, key),
      onUploadId: (key, id) => ledger.recordUpload(runId, partition.key, bucket.name, stem, key, id),
      existing: async (key) => (await listing).get(key),
    });
    const before = [...(await listing).keys()];
    const result = await req.validate(objects, counts);
    req.onValidated(result);
    if (req.signal.aborted) throw new AbortedError();

    const manifestKey = manifestKeyOf(stem);
    const listed = new Set(objects.map((o) => o.key));
    for (const key of before)
      if (!listed.has(key) && key !== manifestKey) ledger.recordObject(runId, partition.key, bucket.name, stem, key);
    const manifest: PartitionManifest = {
      format: MANIFEST_FORMAT,
      partition: partition.key,
      run_id: runId,
      plan_hash: req.planHash,
      attempt: req.attempt,
      records: objects.reduce((n, o) => n + o.records, 0),
      bytes: objects.reduce((n, o) => n + o.size, 0),
      checksum: partitionChecksum(objects),
      objects: objects.map((o) => ({ key: o.key, size: o.size, sha256: o.sha256, records: o.records })),
      source: { records: counts.records, objects: counts.objects, bytes: counts.bytes },
      published_at: new Date().toISOString(),
    };
    await bucket.put(manifestKey, serializeManifest(manifest), 'application/json', req.labels);
    // the manifest just written is the partition's current one (under this machine's lock): not read back
    await cleanupPartition(bucket, ledger, stem, manifest);
    return { result, manifest };
  } catch (err) {
    // Best effort: if S3 is unreachable now, the ledger keeps the records for the next run.
    await cleanupPartition(bucket, ledger, stem).catch(() => undefined);
    throw err;
  } finally {
    ledger.unlock(bucket.name, stem);
  }
}

/**
 * Settles the recorded effects of one partition against its current manifest: uploads are
 * aborted, objects the manifest does not list are deleted, and the records are forgotten.
 * `current` is that manifest when the caller has just written it; otherwise it is read from S3.
 */
export async function cleanupPartition(bucket: S3Bucket, ledger: S3Ledger, stem: string, current?: PartitionManifest): Promise<void> {
  const effects = ledger.effectsOf(bucket.name, stem);
  if (effects.length === 0) return;
  const text = current === undefined ? await bucket.getText(manifestKeyOf(stem)) : null;
  const manifest = current ?? (text === null ? null : parseManifest(text));
  const keep = new Set((manifest?.objects ?? []).map((o) => o.key));
  for (const upload of effects.filter((e) => e.kind === 'upload')) {
    if (upload.uploadId) await bucket.abortUpload(upload.objectKey, upload.uploadId);
  }
  const doomed = [...new Set(effects.filter((e) => e.kind === 'object' && !keep.has(e.objectKey)).map((e) => e.objectKey))];
  await bucket.deleteKeys(doomed);
  ledger.forget(effects.map((e) => e.id));
}

/** Cleans up what runs that are not executing right now left in this bucket. */
export async function cleanupAbandoned(bucket: S3Bucket, ledger: S3Ledger): Promise<number> {
  const stems = [...new Set(ledger.abandonedEffects(bucket.name).map((e) => e.stem))];
  for (const stem of stems) {
    if (!ledger.lock(bucket.name, stem, 'cleanup')) continue;
    try {
      await cleanupPartition(bucket, ledger, stem);
    } finally {
      ledger.unlock(bucket.name, stem);
    }
  }
  return stems.length;
}
