/**
 * Every PostgreSQL SQL text of a job, checked at once before a command uses the job against a
 * server (dry run, check, prove, snapshot, run): a job holding one text that could write is
 * refused whole, with exit 2 naming the field, whichever command meets it first. Each text is
 * checked again where it runs (userQuery.ts); this is the early, uniform refusal.
 *
 * DuckDB SQL on S3 sides (source.query of an S3 source, S3 sides of rules) has its own guard
 * (targets/s3/lakeSql.ts).
 */
import type { Job } from '../../../shared/schemas.ts';
import { checkReadOnlySelect } from './readOnlySelect.ts';

export interface JobSqlText {
  field: string;
  sql: string;
}

/** The Postgres SQL texts of `job`, each with its field. */
export function postgresSqlOf(job: Job): JobSqlText[] {
  const texts: JobSqlText[] = [];
  const sourceIsPostgres = job.source.kind !== 's3';
  const targetIsPostgres = job.target.kind !== 's3';
  if (sourceIsPostgres && 'query' in job.source && typeof job.source.query === 'string')
    texts.push({ field: 'source.query', sql: job.source.query });
  for (const [i, rule] of job.validation.entries()) {
    if (sourceIsPostgres) texts.push({ field: `validation[${i}].source`, sql: rule.source });
    if (targetIsPostgres) texts.push({ field: `validation[${i}].target`, sql: rule.target });
  }
  // Quality rules run on the source's connection, which is Postgres for every rule kind.
  for (const [i, rule] of job.quality.entries()) {
    if (rule.kind === 'custom_sql') texts.push({ field: `quality[${i}].sql`, sql: rule.sql });
  }
  return texts;
}

export async function checkJobSql(job: Job): Promise<void> {
  for (const { field, sql } of postgresSqlOf(job)) await checkReadOnlySelect(sql, { field, where: `job "${job.name}"` });
}
