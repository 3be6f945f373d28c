import type Database from 'better-sqlite3';
import { canonicalJson } from '../json.ts';
import { toJob, type JobRow } from '../rows.ts';
import type { Clock, Job } from '../types.ts';
import type { AuditRepo } from './audit.ts';

export interface JobInput {
  name: string;
  jobHash: string;
  definition: unknown;
  sourceFile?: string | null;
  /** Who saved it; audited. Defaults to 'system'. */
  actor?: string;
}

export interface JobsRepo {
  /** Saves the job; writes nothing (and no audit) when hash and source file are unchanged. */
  upsert(input: JobInput): Job;
  get(name: string): Job | undefined;
}

export function createJobsRepo(db: Database.Database, clock: Clock, audit: AuditRepo): JobsRepo {
  const statements = {
    get: db.prepare<[string], JobRow>('SELECT * FROM jobs WHERE name = ?'),
    upsert: db.prepare<Record<string, unknown>, JobRow>(`
      INSERT INTO jobs (name, job_hash, definition_json, source_file, updated_at)
      VALUES (@name, @jobHash, @definitionJson, @sourceFile, @now)
      ON CONFLICT (name) DO UPDATE SET
        job_hash = excluded.job_hash, definition_json = excluded.definition_json,
        source_file = excluded.source_file, updated_at = excluded.updated_at
      RETURNING *`),
  };

  const upsert = db.transaction((input: JobInput): Job => {
    const before = statements.get.get(input.name);
    const sourceFile = input.sourceFile ?? null;
    if (before !== undefined && before.job_hash === input.jobHash && before.source_file === sourceFile) return toJob(before);
    const row = statements.upsert.get({
      name: input.name,
      jobHash: input.jobHash,
      definitionJson: canonicalJson(input.definition, `job ${input.name} definition`),
      sourceFile,
      now: clock().toISOString(),
    });
    if (row === undefined) throw new Error('INSERT … RETURNING gave no job row');
    audit.append({
      entity: 'job',
      entityId: input.name,
      event: before === undefined ? 'job.created' : 'job.updated',
      actor: input.actor ?? 'system',
      detail: { jobHash: input.jobHash, previousJobHash: before?.job_hash ?? null, sourceFile },
    });
    return toJob(row);
  });

  return {
    upsert: (input) => upsert.immediate(input),
    get: (name) => {
      const row = statements.get.get(name);
      return row === undefined ? undefined : toJob(row);
    },
  };
}
