/**
 * The daily-ETL guard (docs/design.md §1, seed 000): raw data recovered by a backfill must never land
 * under the automated export's prefix, where the daily ETL would silently process it again and
 * duplicate records in the refined layer. A plan whose S3 target would write there is refused,
 * with the prefix to use instead.
 *
 * An automated prefix is whatever a job declares as `prefix` on its source or target, in the
 * same bucket as the target.
 */
import type { Config, Job } from '../../../shared/schemas.ts';
import type { Partition } from '../../../shared/partitions.ts';
import { manifestKeyOf, renderPath, s3Url } from '../targets/s3/paths.ts';
import type { Gate } from './gates.ts';

export const prefixGate: Gate = ({ prepared, config }) => automatedPrefixRefusals(prepared.job, prepared.partitions, config);

export function automatedPrefixRefusals(job: Job, partitions: readonly Partition[], config: Config): string[] {
  const target = job.target;
  if (target.kind !== 's3') return [];
  const bucket = bucketOf(config, target.connection);
  const automated: { prefix: string; backfill?: string; field: string }[] = [];
  if (target.prefix !== undefined) automated.push({ prefix: target.prefix, backfill: target.backfill_prefix, field: 'target.prefix' });
  const source = job.source;
  if (source.kind === 's3' && source.prefix !== undefined && bucketOf(config, source.connection) === bucket) {
    automated.push({ prefix: source.prefix, backfill: source.backfill_prefix ?? target.backfill_prefix, field: 'source.prefix' });
  }
  for (const a of automated) {
    const hit = partitions.find((p) => renderPath(target.path, p.key, job.unit).startsWith(a.prefix));
    if (!hit) continue;
    const stem = renderPath(target.path, hit.key, job.unit);
    const backfill = a.backfill ?? `${a.prefix.slice(0, -1)}-backfill/`;
    const path = suggestedPath(target.path, a.prefix, backfill);
    const example = renderPath(path, hit.key, job.unit);
    const marker = manifestKeyOf(example).slice(example.length - 3);
    return [
      `the target would write raw backfill data into the automated prefix ${s3Url(bucket, a.prefix)} (${a.field}), e.g. ${s3Url(bucket, stem)}…; ` +
        'the daily ETL reads that prefix and would process these objects again, duplicating records downstream. ' +
        `Write them under the backfill prefix ${s3Url(bucket, backfill)} instead: set target.path to ${JSON.stringify(path)}, ` +
        `e.g. ${s3Url(bucket, `${example}${example.endsWith('/') ? 'part-' : '#'}0.json.gz`)} with its …${marker} marker`,
    ];
  }
  return [];
}

/** `raw/raw_{date}_{hour}` under `raw/` → `raw-backfill/raw-backfill_{date}_{hour}`. */
export function suggestedPath(path: string, automated: string, backfill: string): string {
  const rest = path.startsWith(automated) ? path.slice(automated.length) : path;
  const from = lastSegment(automated);
  const to = lastSegment(backfill);
  return `${backfill}${from !== '' && rest.startsWith(from) ? to + rest.slice(from.length) : rest}`;
}

function lastSegment(prefix: string): string {
  const parts = prefix.split('/').filter((p) => p !== '');
  return parts.at(-1) ?? '';
}

function bucketOf(config: Config, connection: string): string {
  const c = config.connections[connection];
  return c?.kind === 's3' ? c.bucket : connection;
}
