/**
 * Proving a job idempotent on real data (source article 001: automatic backfills only for
 * code whose idempotency is proven). The proof is kept as evidence bound to the job's hash and
 * write mode; the automation tier allows `auto` only with such a proof on record.
 */
import { partitionRange } from '../../../shared/partitions.ts';
import type { Config, Job, WriteMode } from '../../../shared/schemas.ts';
import { InputError } from '../../../shared/errors.ts';
import { jobHash } from '../plan/hash.ts';
import { openTarget } from '../runbook/prepare.ts';
import type { Store } from '../store/index.ts';
import { PostgresPartitionTarget } from '../targets/postgres/partitionTarget.ts';
import { shiftBoundary } from './window.ts';
import { checkJobSql } from '../sql/jobSql.ts';

export interface IdempotencyProof {
  jobHash: string;
  job: string;
  writeMode: WriteMode;
  partition: string;
  first: string;
  second: string;
  rows: [number, number];
  identical: boolean;
}

export async function proveIdempotency(o: {
  config: Config;
  job: Job;
  writeMode: WriteMode;
  partition: string;
  store: Store;
  env?: NodeJS.ProcessEnv;
}): Promise<{ proof: IdempotencyProof; evidenceId: number }> {
  const [partition] = partitionRange({ from: o.partition, to: nextKey(o.partition, o.job) }, o.job.unit, o.job.timezone, {
    from: '--partition',
    to: '--partition',
  });
  if (!partition) throw new InputError(`--partition ${o.partition} names no partition`, { field: '--partition', value: o.partition });
  await checkJobSql(o.job);
  const target = openTarget(o.config, o.job, o.writeMode, o.env, o.store);
  if (!(target instanceof PostgresPartitionTarget)) {
    await target.close();
    throw new InputError('an idempotency proof needs a Postgres target (S3 partitions are proven by identical manifests on rerun)', {
      field: 'target.connection',
    });
  }
  try {
    const result = await target.proveIdempotent(partition, o.writeMode);
    const proof: IdempotencyProof = {
      jobHash: jobHash(o.job),
      job: o.job.name,
      writeMode: o.writeMode,
      partition: partition.key,
      ...result,
      identical: result.first === result.second,
    };
    const evidence = o.store.evidence.add({ runId: null, planHash: null, kind: 'idempotency-proof', body: proof });
    return { proof, evidenceId: evidence.id };
  } finally {
    await target.close();
  }
}

/** Is there a passing proof for this exact job version and write mode? */
export function idempotencyProven(store: Store, job: Job, writeMode: WriteMode): boolean {
  const hash = jobHash(job);
  return store.evidence.list({ kind: 'idempotency-proof' }).some((e) => {
    const body = e.body as Partial<IdempotencyProof>;
    return body.jobHash === hash && body.writeMode === writeMode && body.identical === true;
  });
}

/** The key after `key` in the job's unit: a one-partition range. */
function nextKey(key: string, job: Job): string {
  if (!/^\d{4}-\d{2}(-\d{2}(T\d{2})?)?$/.test(key)) {
    throw new InputError(
      `--partition ${JSON.stringify(key)} is not a partition key like 2026-05-01 (day), 2026-05 (month) or 2026-05-01T13 (hour)`,
      { field: '--partition', value: key },
    );
  }
  return shiftBoundary(key, job.unit, 1);
}
