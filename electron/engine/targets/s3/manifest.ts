/**
 * The `_complete` manifest of an S3 partition: the one object that says what the partition
 * is. Written last, in one PUT; a partition is published exactly when its manifest exists,
 * and readers that follow it read exactly the objects it lists.
 *
 * An `_complete` that is not ours (the automated export's empty marker, say) parses as null:
 * the partition then holds whatever its data objects are.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../../../shared/canonicalJson.ts';
import type { PartitionMark } from '../../executor/types.ts';

export const MANIFEST_FORMAT = 'backfill-runbook/partition-manifest@1';

export interface ManifestObject {
  key: string;
  size: number;
  /** sha256 (hex) of the object's bytes as stored (compressed when gzip) */
  sha256: string;
  records: number;
}

export interface PartitionManifest {
  format: typeof MANIFEST_FORMAT;
  partition: string;
  run_id: string;
  plan_hash: string;
  attempt: number;
  records: number;
  bytes: number;
  /** partitionChecksum(objects): equal content gives an equal checksum, run after run */
  checksum: string;
  objects: ManifestObject[];
  /** what was read to write it: records always; objects and bytes for S3 sources */
  source: { records: number; objects: number | null; bytes: number | null };
  published_at: string;
}

/** sha256 over the objects' own sha256s, in order: the partition's content checksum. */
export function partitionChecksum(objects: readonly Pick<ManifestObject, 'sha256'>[]): string {
  const hash = createHash('sha256');
  for (const o of objects) hash.update(`${o.sha256}\n`);
  return `sha256:${hash.digest('hex')}`;
}

export function serializeManifest(manifest: PartitionManifest): string {
  return `${canonicalJson(manifest)}\n`;
}

/** Our manifest, or null for anything else (empty marker, other JSON, garbage). */
export function parseManifest(text: string): PartitionManifest | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const m = value as Partial<PartitionManifest>;
  if (m.format !== MANIFEST_FORMAT || !Array.isArray(m.objects) || typeof m.run_id !== 'string' || typeof m.records !== 'number')
    return null;
  return m as PartitionManifest;
}

export function markOf(manifest: PartitionManifest): PartitionMark {
  return {
    partitionKey: manifest.partition,
    runId: manifest.run_id,
    planHash: manifest.plan_hash,
    attempt: manifest.attempt,
    rowsWritten: manifest.records,
    checksum: manifest.checksum,
    publishedAt: manifest.published_at,
  };
}
