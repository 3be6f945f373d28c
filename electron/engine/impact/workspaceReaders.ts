/**
 * What each of the workspace's other jobs reads and writes, for the impact scope: a Postgres
 * source query's relations come from its parse tree (PostgreSQL's own parser, the same check
 * every user SQL passes), never from a regex, so `from mart.t`, `join "mart"."t"`, a CTE named
 * like a table or a name inside a string literal are each told apart.
 */
import { describeError } from '../../../shared/errors.ts';
import type { ImpactBuilder } from '../../../shared/impact.ts';
import type { Job } from '../../../shared/schemas.ts';
import { checkReadOnlySelect } from '../sql/readOnlySelect.ts';

export interface JobReads {
  job: Job;
  /** the connection of a Postgres source; null for an S3 source */
  connection: string | null;
  /** relations its Postgres source query reads, as written (`mart.t`, `t`) */
  relations: string[];
  /** the Postgres table it writes, and where */
  writes: { table: string; connection: string } | null;
  /** an S3 source: `connection|path template` */
  s3Source: string | null;
}

export async function workspaceReaders(jobs: readonly Job[], g: ImpactBuilder): Promise<JobReads[]> {
  const out: JobReads[] = [];
  for (const job of jobs) {
    const s = job.source;
    const t = job.target;
    const writes = t.kind === 's3' ? null : { table: t.table, connection: t.connection };
    if (s.kind === 's3') {
      out.push({ job, connection: null, relations: [], writes, s3Source: `${s.connection}|${s.path}` });
      continue;
    }
    let relations: string[] = [];
    try {
      relations = (await checkReadOnlySelect(s.query, { field: 'source.query', where: `job "${job.name}"` })).relations;
    } catch (err) {
      g.problems.push(
        `job ${job.name}'s source query could not be parsed, so whether it reads the target is unknown: ${describeError(err)}`,
      );
    }
    out.push({ job, connection: s.connection, relations, writes, s3Source: null });
  }
  return out;
}
