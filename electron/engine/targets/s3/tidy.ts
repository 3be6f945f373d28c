/**
 * Retention for what backfills wrote (seed 000: "처리 후 백필 삭제" — delete backfill data once
 * processed): a job's `target.backfill_retention_days` says how long the partitions it
 * published under its backfill prefix are kept. `run-backfill lake tidy` lists what is due
 * (a dry run) and deletes it only with --apply.
 *
 * Rules, so a tidy can never take what a reader still follows or what is not ours:
 *   - only under the job's backfill prefix, never where it meets the automated prefix;
 *   - a partition is due when ITS manifest (ours, by format) was published before the cutoff;
 *     then its manifest goes first (readers stop following it), then the objects it lists;
 *   - an object is deleted only if it carries the tag source=backfill, and never while a
 *     manifest that is not due lists it (content-named objects are shared by reruns);
 *   - tagged objects no manifest lists (left by a run that died) go once older than the cutoff.
 */
import { InputError } from '../../../../shared/errors.ts';
import type { Job } from '../../../../shared/schemas.ts';
import type { S3Bucket } from './bucket.ts';
import { mapLimit } from './concurrency.ts';
import { parseManifest } from './manifest.ts';
import { MANIFEST_SUFFIX, rootOf } from './paths.ts';

export interface TidyPartition {
  manifestKey: string;
  partition: string;
  runId: string;
  publishedAt: string;
  keys: string[];
  bytes: number;
}

export interface TidyPlan {
  bucket: string;
  root: string;
  cutoff: string;
  retentionDays: number;
  partitions: TidyPartition[];
  /** tagged objects no manifest lists, older than the cutoff */
  strays: { key: string; size: number; lastModified: string }[];
  /** manifests kept (published after the cutoff) */
  kept: number;
}

export async function planTidy(bucket: S3Bucket, job: Job, now: Date): Promise<TidyPlan> {
  const target = job.target;
  if (target.kind !== 's3') throw new InputError(`job ${job.name} does not write to S3: nothing to tidy`, { field: 'target.kind' });
  const days = target.backfill_retention_days;
  if (days === undefined || target.backfill_prefix === undefined) {
    throw new InputError(`job ${job.name} declares no backfill_retention_days: nothing is due (add target.backfill_retention_days: N)`, {
      field: 'target.backfill_retention_days',
    });
  }
  const root = rootOf(target.path);
  const automated = target.prefix;
  if (!root.startsWith(target.backfill_prefix) || (automated !== undefined && (root.startsWith(automated) || automated.startsWith(root)))) {
    throw new InputError(
      `target.path ${JSON.stringify(target.path)} is not under the backfill prefix ${JSON.stringify(target.backfill_prefix)} alone: tidy never touches the automated prefix`,
      { field: 'target.path', value: target.path },
    );
  }
  const cutoff = new Date(now.getTime() - days * 86_400_000).toISOString();
  const listed = await bucket.listAll(root);
  const sizes = new Map(listed.map((o) => [o.key, o]));
  const manifests = listed.filter((o) => o.key.endsWith(MANIFEST_SUFFIX));
  const parsed = await mapLimit(manifests, bucket.concurrency, async (o) => ({
    key: o.key,
    manifest: parseManifest((await bucket.getText(o.key)) ?? ''),
  }));
  const live = new Set<string>();
  const due: TidyPartition[] = [];
  for (const { key, manifest } of parsed) {
    if (!manifest) continue; // not ours: never touched
    if (manifest.published_at >= cutoff) {
      manifest.objects.forEach((o) => live.add(o.key));
      continue;
    }
    due.push({
      manifestKey: key,
      partition: manifest.partition,
      runId: manifest.run_id,
      publishedAt: manifest.published_at,
      keys: manifest.objects.map((o) => o.key).filter((k) => sizes.has(k)),
      bytes: manifest.objects.reduce((n, o) => n + o.size, 0),
    });
  }
  const listedByDue = new Set(due.flatMap((p) => p.keys));
  const candidates = listed.filter((o) => !o.key.endsWith(MANIFEST_SUFFIX) && !live.has(o.key));
  const tags = await mapLimit(candidates, bucket.concurrency, async (o) => ({ o, tags: await bucket.getTags(o.key) }));
  const ours = new Set(tags.filter((t) => t.tags.source === 'backfill').map((t) => t.o.key));
  const manifestTags = await mapLimit(due, bucket.concurrency, async (p) => (await bucket.getTags(p.manifestKey)).source === 'backfill');
  const partitions = due.filter((_, i) => manifestTags[i]).map((p) => ({ ...p, keys: p.keys.filter((k) => ours.has(k) && !live.has(k)) }));
  const strays = candidates
    .filter((o) => ours.has(o.key) && !listedByDue.has(o.key) && (o.lastModified ?? '') < cutoff)
    .map((o) => ({ key: o.key, size: o.size, lastModified: o.lastModified ?? '' }));
  return {
    bucket: bucket.name,
    root,
    cutoff,
    retentionDays: days,
    partitions,
    strays,
    kept: parsed.filter((p) => p.manifest && p.manifest.published_at >= cutoff).length,
  };
}

/** Deletes what the plan lists: every due manifest first, then the objects. */
export async function applyTidy(bucket: S3Bucket, plan: TidyPlan): Promise<number> {
  await bucket.deleteKeys(plan.partitions.map((p) => p.manifestKey));
  const keys = [...plan.partitions.flatMap((p) => p.keys), ...plan.strays.map((s) => s.key)];
  await bucket.deleteKeys(keys);
  return plan.partitions.length + keys.length;
}
