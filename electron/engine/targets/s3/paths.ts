/**
 * Where an S3 partition lives. Pure: no SDK, no I/O.
 *
 * A job's `path` renders, per partition, to the partition's key STEM. The partition is:
 *   - its data objects: keys that start with the stem, followed by a character that is not a
 *     letter or digit (so hour 1's stem `…_01` never picks up hour 10's `…_10#0.json.gz`), or
 *     anything at all when the stem ends in "/" (a Hive-style folder `dt=2026-01-20/`);
 *   - its manifest, `<stem>_complete`: `…_2026-01-20_19_complete`, or `dt=2026-01-20/_complete`.
 * Snapshots live outside every data prefix, at `_snapshots/<run id>/<original key>`, so no
 * reader that lists a data prefix ever sees them.
 */
import { InputError } from '../../../../shared/errors.ts';
import { literalHead, S3_PLACEHOLDERS, templatePlaceholders, type S3Placeholder, type Unit } from '../../../../shared/schemas.ts';
import { s3KeyProblem } from '../../../../shared/s3Keys.ts';

export const MANIFEST_SUFFIX = '_complete';
export const SNAPSHOT_ROOT = '_snapshots/';

const KEY = /^(\d{4})-(\d{2})(?:-(\d{2}))?(?:T(\d{2}))?(\+\d+)?$/;

/**
 * The placeholder values of a partition key. A wall-clock hour (or day) that occurs twice when
 * the clocks fall back keeps its '+1' suffix on the finest placeholder, so the two partitions
 * never share a location: hour `2026-11-01T01+1` renders {hour} as `01+1`.
 */
export function placeholderValues(partitionKey: string, unit: Unit): Record<S3Placeholder, string> {
  const m = KEY.exec(partitionKey);
  if (!m) throw new Error(`not a partition key: ${JSON.stringify(partitionKey)}`);
  const [, y, mo, d, h, repeat] = m;
  const suffix = repeat ?? '';
  const date = `${y}-${mo}-${d ?? '01'}`;
  const finest = (u: Unit): string => (unit === u ? suffix : '');
  return {
    date: unit === 'hour' ? date : `${date}${suffix}`,
    hour: unit === 'hour' ? `${h ?? '00'}${suffix}` : '',
    partition: partitionKey,
    yyyy: y ?? '',
    mm: `${mo ?? ''}${finest('month')}`,
    dd: `${d ?? '01'}${finest('day')}`,
    hh: unit === 'hour' ? `${h ?? '00'}${suffix}` : '',
  };
}

/**
 * The key stem of one partition. The rendered key is checked once more as a whole (the
 * template was checked when the job was read): every prefix comparison after this one —
 * the daily-ETL guard, listings, tidy — compares normalised keys.
 */
export function renderPath(template: string, partitionKey: string, unit: Unit, field = 'path'): string {
  const values = placeholderValues(partitionKey, unit);
  const key = template.replace(/\{([^{}]*)\}/g, (whole, name: string) =>
    (S3_PLACEHOLDERS as readonly string[]).includes(name) ? values[name as S3Placeholder] : whole,
  );
  const problem = s3KeyProblem(key);
  if (problem !== undefined) throw new InputError(`${field}: the key ${JSON.stringify(key)} ${problem}`, { field, value: template });
  return key;
}

export function manifestKeyOf(stem: string): string {
  return `${stem}${MANIFEST_SUFFIX}`;
}

/** True when `key` is an object of the partition whose stem is `stem` (its manifest included). */
export function belongsTo(stem: string, key: string): boolean {
  if (!key.startsWith(stem)) return false;
  const rest = key.slice(stem.length);
  return rest === '' || stem.endsWith('/') || !/^[A-Za-z0-9]/.test(rest);
}

/** A data object of the partition: not a `_complete` marker (its own or a finer one), not a folder placeholder. */
export function isDataKey(stem: string, key: string): boolean {
  return belongsTo(stem, key) && !key.endsWith(MANIFEST_SUFFIX) && !key.endsWith('/');
}

/**
 * The name of the n-th data object of a partition, derived from its content: a rerun that
 * writes the same records writes the same keys, and new content never overwrites an object an
 * existing manifest lists (so a reader following that manifest keeps reading what it listed).
 */
export function dataObjectKey(stem: string, index: number, sha256: string, ext: string): string {
  const name = `${index}.${sha256.slice(0, 16)}.${ext}`;
  return stem.endsWith('/') ? `${stem}part-${name}` : `${stem}#${name}`;
}

/** The folder the path's fixed text reaches: `events-backfill/` for `events-backfill/events-backfill_{date}`. */
export function rootOf(template: string): string {
  const head = literalHead(template);
  return head.slice(0, head.lastIndexOf('/') + 1);
}

export function snapshotPrefix(runId: string): string {
  return `${SNAPSHOT_ROOT}${runId}/`;
}

export function snapshotObjectKey(runId: string, key: string): string {
  return `${snapshotPrefix(runId)}${key}`;
}

export function snapshotManifestKey(runId: string, partitionKey: string): string {
  return `${snapshotPrefix(runId)}_manifests/${partitionKey}.json`;
}

export function s3Url(bucket: string, key: string): string {
  return `s3://${bucket}/${key}`;
}

/** Placeholders a path uses, for messages. */
export function placeholdersOf(template: string): string[] {
  return templatePlaceholders(template);
}
