/**
 * Opens the partition target of a job that reads or writes S3: Postgres → S3, S3 → S3 and
 * S3 → Postgres. (Postgres → Postgres stays with targets/postgres.) Every combination runs in
 * the same Runner, partition by partition.
 */
import type { Config, Connection, Job, PostgresConnection, WriteMode } from '../../../../shared/schemas.ts';
import { InputError } from '../../../../shared/errors.ts';
import type { PartitionTarget } from '../../executor/types.ts';
import type { Store } from '../../store/index.ts';
import { backfillApplicationName } from '../postgres/partitionTarget.ts';
import { ClientPool } from '../postgres/pool.ts';
import { S3Bucket } from './bucket.ts';
import { createS3Client, DEFAULT_S3_CONCURRENCY, s3Endpoint } from './client.ts';
import { S3Ledger } from './ledger.ts';
import { PostgresRecordSource } from './pgJsonSource.ts';
import { S3PartitionTarget } from './s3Target.ts';
import { S3RecordSource, type RecordSource } from './sources.ts';
import { S3ToPostgresTarget } from './s3ToPostgres.ts';

export interface PostgresEndpointLike {
  name: string;
  connection: PostgresConnection;
  password?: string;
}

export interface OpenS3Options {
  env: NodeJS.ProcessEnv;
  /** The local store; an S3 target writes nothing without it (its ledger lives there). */
  store?: Store;
  /** Resolves a Postgres connection with its password (prepare.ts owns how). */
  postgres(name: string, field: string): PostgresEndpointLike;
}

/** True when the job names an S3 connection or describes an S3 side. */
export function involvesS3(config: Config, job: Job): boolean {
  return (
    job.source.kind === 's3' ||
    job.target.kind === 's3' ||
    config.connections[job.source.connection]?.kind === 's3' ||
    config.connections[job.target.connection]?.kind === 's3'
  );
}

export function openS3Target(config: Config, job: Job, writeMode: WriteMode, opts: OpenS3Options): PartitionTarget {
  checkKinds(config, job);
  const { source, target } = job;
  if (target.kind === 's3') {
    if (writeMode !== 'overwrite-partition') {
      throw new InputError(
        `--mode ${writeMode} cannot apply to an S3 target: its partitions are replaced whole (a new manifest swaps them atomically); use overwrite-partition`,
        {
          field: 'write_mode',
          value: writeMode,
        },
      );
    }
    const bucket = openBucket(config, target.connection, 'target.connection', opts.env);
    let records: RecordSource;
    if (source.kind === 's3') {
      // the same connection is the same bucket: one client, one check
      const from = source.connection === target.connection ? bucket : openBucket(config, source.connection, 'source.connection', opts.env);
      records = new S3RecordSource(from, source, job.unit, job.timezone);
    } else {
      const pg = opts.postgres(source.connection, 'source.connection');
      records = new PostgresRecordSource(
        new ClientPool(pg.connection, pg.password, job.timezone, backfillApplicationName(job.name)),
        source.query,
        `query on ${pg.name}`,
        `job "${job.name}"`,
      );
    }
    return new S3PartitionTarget({
      job,
      spec: target,
      writeMode,
      bucket,
      source: records,
      ledger: opts.store ? new S3Ledger(opts.store) : undefined,
    });
  }
  if (source.kind !== 's3') throw new Error('openS3Target: neither side is S3');
  const pg = opts.postgres(target.connection, 'target.connection');
  return new S3ToPostgresTarget({
    job,
    spec: target,
    writeMode,
    pool: new ClientPool(pg.connection, pg.password, job.timezone, backfillApplicationName(job.name)),
    source: new S3RecordSource(openBucket(config, source.connection, 'source.connection', opts.env), source, job.unit, job.timezone),
    role: roleOf(pg.connection.url),
    targetName: pg.name,
  });
}

export function openBucket(config: Config, name: string, field: string, env: NodeJS.ProcessEnv, concurrency?: number): S3Bucket {
  const connection = config.connections[name];
  if (connection?.kind !== 's3') throw new InputError(`connection "${name}" is not an S3 connection`, { field, value: name });
  const limit = concurrency ?? DEFAULT_S3_CONCURRENCY;
  return new S3Bucket(connection.bucket, createS3Client(s3Endpoint(name, connection, env), limit), limit);
}

/** A job side and its connection must agree on what they are. */
function checkKinds(config: Config, job: Job): void {
  for (const side of ['source', 'target'] as const) {
    const spec = job[side];
    const connection: Connection | undefined = config.connections[spec.connection];
    if (!connection) {
      throw new InputError(
        `connection "${spec.connection}" is not in the config (known: ${Object.keys(config.connections).join(', ') || 'none'})`,
        {
          field: `${side}.connection`,
          value: spec.connection,
        },
      );
    }
    const wanted = spec.kind ?? 'postgres';
    if (connection.kind === wanted) continue;
    const what =
      side === 'source' ? (wanted === 's3' ? 'S3 objects' : 'a Postgres query') : wanted === 's3' ? 'an S3 partition' : 'a Postgres table';
    const fix =
      connection.kind === 's3'
        ? `add kind: s3 and a path to the job's ${side} (e.g. path: "events/events_{date}_{hour}"), or use a Postgres connection`
        : `use an S3 connection (kind: s3, bucket: …), or describe a Postgres ${side === 'source' ? 'query' : 'table'}`;
    throw new InputError(
      `${side}.connection "${spec.connection}" is ${describeKind(connection)}, but the job's ${side} describes ${what}: ${fix}`,
      {
        field: `${side}.connection`,
        value: spec.connection,
      },
    );
  }
}

function describeKind(c: Connection): string {
  return c.kind === 's3' ? `an S3 connection (bucket ${c.bucket})` : 'a Postgres connection';
}

function roleOf(url: string): string {
  try {
    return decodeURIComponent(new URL(url).username) || 'backfill';
  } catch {
    return 'backfill';
  }
}
