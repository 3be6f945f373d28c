/**
 * Which partitions of a plan are closed for overwriting (an invoiced billing period, a month
 * already reported), from the job's `closed_partitions` and the workspace's (config) rules for
 * its target: a fixed range, or a probe — a job's or config's SQL, so it runs through userQuery
 * in a READ ONLY transaction like every user SQL, with :range_start and :range_end bound.
 */
import { InputError } from '../../../shared/errors.ts';
import { boundaryInstant, instantOf, type Partition } from '../../../shared/partitions.ts';
import type { ClosedRule, Config, Job } from '../../../shared/schemas.ts';
import { checkReadOnlySelect } from '../sql/readOnlySelect.ts';
import { backfillApplicationName } from '../targets/postgres/partitionTarget.ts';
import { withReadOnlySession } from '../targets/postgres/readOnlySession.ts';
import { userQuery } from '../targets/postgres/userQuery.ts';
import { postgresEndpoint } from './prepare.ts';

interface SourcedRule {
  rule: ClosedRule;
  /** where it is written, for messages: `closed_partitions[0]` of job "x" or of the config */
  field: string;
  where: string;
}

/** The job's rules and the workspace's rules naming its target. */
export function closedRules(job: Job, config: Config): SourcedRule[] {
  const target = job.target.kind === 's3' ? job.target.path : job.target.table;
  return [
    ...(job.closed_partitions ?? []).map((rule, i) => ({ rule, field: `closed_partitions[${i}]`, where: `job "${job.name}"` })),
    ...(config.closed_partitions ?? []).flatMap((rule, i) =>
      rule.targets.some((t) => t.toLowerCase() === target.toLowerCase())
        ? [{ rule, field: `closed_partitions[${i}]`, where: 'the workspace config' }]
        : [],
    ),
  ];
}

/** A probe's value (`2026-05-01`, `2026-05-01 13:00:00+09`, `2026-05`) as the key prefix it closes. */
export function closedPrefix(value: string, unit: Job['unit']): string | null {
  const m = /^(\d{4}-\d{2})(?:-(\d{2})(?:[ T](\d{2}))?)?/.exec(value.trim());
  if (!m) return null;
  const [, month, day, hour] = m;
  if (unit === 'month' || day === undefined) return month ?? null;
  if (unit === 'day' || hour === undefined) return `${month}-${day}`;
  return `${month}-${day}T${hour}`;
}

/** partition key → why it is closed. */
export async function closedPartitions(
  job: Job,
  config: Config,
  env: NodeJS.ProcessEnv,
  partitions: readonly Partition[],
): Promise<Map<string, string>> {
  const closed = new Map<string, string>();
  const close = (key: string, why: string) => closed.set(key, closed.has(key) ? `${closed.get(key)}; ${why}` : why);
  const first = partitions[0];
  const last = partitions.at(-1);
  if (!first || !last) return closed;
  for (const { rule, field, where } of closedRules(job, config)) {
    if (rule.range) {
      const from = boundaryInstant(rule.range.from, job.unit, job.timezone, `${field}.range.from`);
      const to = boundaryInstant(rule.range.to, job.unit, job.timezone, `${field}.range.to`);
      for (const p of partitions) {
        const t = instantOf(p.start);
        if (t >= from && t < to) close(p.key, `${rule.reason} (${where}: ${rule.range.from} to ${rule.range.to})`);
      }
      continue;
    }
    const probe = rule.probe ?? '';
    const connection = rule.connection ?? (job.target.kind === 's3' ? undefined : job.target.connection);
    if (connection === undefined)
      throw new InputError(`${where}: ${field}.connection is needed: the probe has no Postgres target to run on`, {
        field: `${field}.connection`,
      });
    const endpoint = postgresEndpoint(config, connection, `${field}.connection`, env);
    const origin = { field: `${field}.probe`, where, params: ['range_start', 'range_end'] };
    // Its own text first, so a refusal quotes what the user wrote; then within the composed read.
    await checkReadOnlySelect(probe, origin);
    const body = probe.trim().replace(/;+\s*$/, '');
    const values = await withReadOnlySession(endpoint, job.timezone, backfillApplicationName(job.name), async (client) => {
      const r = await userQuery<{ k: string | null }>(
        client,
        `SELECT p.k::text AS k FROM (\n${body}\n) AS p(k)`,
        { range_start: first.start, range_end: last.end },
        origin,
      );
      return r.rows.map((row) => row.k).filter((k): k is string => k !== null);
    });
    const prefixes = values.map((v) => closedPrefix(v, job.unit)).filter((p): p is string => p !== null);
    for (const p of partitions) {
      if (prefixes.some((x) => p.key.startsWith(x) || x.startsWith(p.key))) close(p.key, `${rule.reason} (${where}: its probe lists it)`);
    }
  }
  return closed;
}
