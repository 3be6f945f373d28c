/**
 * The impact scope of a job's target, derived rather than only declared (shared/impact.ts): the
 * target's catalog (views and materialized views over it, recursively; foreign keys in and out;
 * triggers; publications; partitions), the workspace (every other job whose source query reads
 * the target — found in its parse tree by PostgreSQL's own parser, then resolved by the server
 * to the same relation — and S3 jobs whose source path is the target's path, and so on down the
 * chain), and what the job declares downstream, marked as declared.
 */
import { describeError } from '../../../shared/errors.ts';
import { ImpactBuilder, type ImpactGraph } from '../../../shared/impact.ts';
import type { Config, Job } from '../../../shared/schemas.ts';
import { findJobs, loadJob } from '../plan/load.ts';
import { postgresEndpoint } from '../runbook/prepare.ts';
import { checkReadOnlySelect } from '../sql/readOnlySelect.ts';
import { resolveTable } from '../targets/postgres/catalog.ts';
import { catalogImpact, resolveRelations, type CatalogImpact } from '../targets/postgres/impactCatalog.ts';
import { backfillApplicationName } from '../targets/postgres/partitionTarget.ts';
import { withReadOnlySession } from '../targets/postgres/readOnlySession.ts';
import { workspaceReaders, type JobReads } from './workspaceReaders.ts';

export interface ImpactInput {
  job: Job;
  config: Config;
  env: NodeJS.ProcessEnv;
  /** the workspace's jobs folder; null: the workspace is not looked at */
  jobsDir: string | null;
}

const RELKIND: Readonly<Record<string, { kind: 'view' | 'materialized-view'; what: string }>> = {
  v: { kind: 'view', what: 'view' },
  m: { kind: 'materialized-view', what: 'materialized view' },
};

/** Two connections reach the same database when they are the same name or the same URL. */
export function sameDatabase(config: Config, a: string, b: string): boolean {
  if (a === b) return true;
  const ca = config.connections[a];
  const cb = config.connections[b];
  return ca?.kind === 'postgres' && cb?.kind === 'postgres' && ca.url === cb.url;
}

export async function impactScope(input: ImpactInput): Promise<ImpactGraph> {
  const { job, config } = input;
  const g = new ImpactBuilder();
  const others = input.jobsDir ? readWorkspace(input.jobsDir, config, job.name, g) : [];
  const reads = await workspaceReaders(others, g);
  const targetId = job.target.kind === 's3' ? s3Target(job, config, g) : await postgresTarget(input, reads, g);
  await sourceNodes(job, config, targetId, g);
  if (job.target.kind === 's3') s3Readers(job, reads, targetId, g);
  for (const name of job.classification.downstream) g.declare(name, targetId);
  return g.build();
}

function readWorkspace(jobsDir: string, config: Config, self: string, g: ImpactBuilder): Job[] {
  const jobs: Job[] = [];
  let names: string[];
  try {
    names = findJobs(jobsDir);
  } catch (err) {
    g.problems.push(`the workspace's jobs could not be listed: ${describeError(err)}`);
    return jobs;
  }
  for (const name of names) {
    if (name === self) continue;
    try {
      jobs.push(loadJob(jobsDir, name, config).job);
    } catch (err) {
      g.problems.push(`job ${name} could not be read, so whether it reads the target is unknown: ${describeError(err)}`);
    }
  }
  return jobs;
}

const UNIT_WORD = { hour: 'hourly', day: 'daily', month: 'monthly' } as const;

function jobLabel(j: Job): string {
  return j.target.kind === 's3' ? `s3 ${j.target.path}` : j.target.table;
}

function addJob(g: ImpactBuilder, j: Job, from: string, reason: string, edge: string): string {
  const id = g.node({
    id: `job:${j.name}`,
    kind: 'job',
    label: j.name,
    what: `job ${j.name} (writes ${jobLabel(j)}, ${UNIT_WORD[j.unit]})`,
    reason,
    found: 'workspace',
    job: { name: j.name, target: jobLabel(j), unit: j.unit },
  });
  g.edge(from, id, edge);
  return id;
}

async function postgresTarget(input: ImpactInput, reads: JobReads[], g: ImpactBuilder): Promise<string> {
  const { job, config } = input;
  const target = job.target.kind === 's3' ? undefined : job.target;
  if (!target) throw new Error('not a Postgres target');
  // Names the other jobs read (and write, on this database), resolved by the target's own server.
  const onTargetDb = reads.filter((r) => r.connection !== null && sameDatabase(config, r.connection, target.connection));
  const writes = (r: JobReads) => (r.writes && sameDatabase(config, r.writes.connection, target.connection) ? [r.writes.table] : []);
  const names = [...new Set(onTargetDb.flatMap((r) => [...r.relations, ...writes(r)]))];
  let catalog: CatalogImpact;
  let resolved: Map<string, string>;
  try {
    const endpoint = postgresEndpoint(config, target.connection, 'target.connection', input.env);
    ({ catalog, resolved } = await withReadOnlySession(endpoint, job.timezone, backfillApplicationName(job.name), async (c) => {
      const table = await resolveTable(c, target.table, 'target.table');
      const targetOid = (await resolveRelations(c, [`${table.schema}.${table.name}`])).values().next().value;
      if (targetOid === undefined) throw new Error(`${target.table} has no oid`);
      return { catalog: await catalogImpact(c, targetOid), resolved: await resolveRelations(c, names) };
    }));
  } catch (err) {
    g.problems.push(
      `the target's catalog could not be read, so views, keys, triggers and reading jobs are not shown: ${describeError(err)}`,
    );
    return g.node({
      id: 'target',
      kind: 'target',
      label: target.table,
      what: 'the target table',
      reason: 'its partitions in the range are recomputed',
      found: 'job',
    });
  }
  const t = catalog.target;
  const targetId = g.node({
    id: `rel:${t.oid}`,
    kind: 'target',
    label: t.name,
    what: `the target ${t.kind === 'p' ? 'partitioned table' : 'table'}`,
    reason: 'its partitions in the range are recomputed',
    found: 'catalog',
  });
  for (const a of catalog.ancestors) {
    g.node({
      id: `rel:${a.oid}`,
      kind: 'parent',
      label: a.name,
      what: 'partitioned table',
      reason: `the target is one of its partitions: whoever reads ${a.name} sees the recomputed rows`,
      found: 'catalog',
    });
    g.edge(targetId, `rel:${a.oid}`, 'is a partition of');
  }
  for (const d of catalog.dependents) {
    const k = RELKIND[d.kind] ?? { kind: 'view' as const, what: 'view' };
    const via =
      d.reads === t.oid
        ? 'the target'
        : (catalog.dependents.find((x) => x.oid === d.reads)?.name ?? catalog.ancestors.find((x) => x.oid === d.reads)?.name ?? 'it');
    g.node({
      id: `rel:${d.oid}`,
      kind: k.kind,
      label: d.name,
      what: k.what,
      reason:
        k.kind === 'materialized-view'
          ? `reads ${via}; it keeps the old numbers until REFRESH MATERIALIZED VIEW ${d.name}`
          : `reads ${via}: shows the recomputed rows at once`,
      found: 'catalog',
    });
    g.edge(`rel:${d.reads}`, `rel:${d.oid}`, 'read by');
  }
  for (const p of catalog.partitions) {
    g.node({
      id: `rel:${p.oid}`,
      kind: 'partition',
      label: p.name,
      what: `partition${p.bound ? ` ${p.bound}` : ''}`,
      reason: 'rows of the range land in it: it is rewritten',
      found: 'catalog',
    });
    g.edge(`rel:${p.parent}`, `rel:${p.oid}`, 'rows land in');
  }
  for (const fk of catalog.foreignKeys) {
    const id = `fk:${fk.name}:${fk.other.oid}`;
    if (fk.outgoing) {
      g.node({
        id,
        kind: 'references',
        label: fk.other.name,
        what: `referenced table (foreign key ${fk.name})`,
        reason: `every recomputed row must match a row of ${fk.other.name}, or the partition fails to publish`,
        found: 'catalog',
      });
      g.edge(targetId, id, `references (${fk.name})`);
    } else {
      g.node({
        id,
        kind: 'referenced-by',
        label: fk.other.name,
        what: `referencing table (foreign key ${fk.name}, on delete ${fk.onDelete})`,
        reason:
          fk.onDelete === 'cascade'
            ? `deleting a partition's rows deletes the rows of ${fk.other.name} that point at them (ON DELETE CASCADE)`
            : fk.onDelete === 'set null' || fk.onDelete === 'set default'
              ? `deleting a partition's rows changes the rows of ${fk.other.name} that point at them (ON DELETE ${fk.onDelete.toUpperCase()})`
              : `a partition whose rows ${fk.other.name} points at cannot be deleted: the overwrite fails there`,
        found: 'catalog',
        stale: fk.onDelete !== 'no action' && fk.onDelete !== 'restrict',
      });
      g.edge(targetId, id, `referenced by (${fk.name})`);
    }
  }
  for (const tr of catalog.triggers) {
    const id = `trigger:${tr.name}`;
    g.node({
      id,
      kind: 'trigger',
      label: tr.name,
      what: `trigger ${tr.timing} → ${tr.fn}${tr.enabled ? '' : ' (disabled)'}`,
      reason: tr.enabled
        ? `fires on the run's writes (${tr.timing}): whatever ${tr.fn} does happens once per written row or statement`
        : 'disabled: does not fire',
      found: 'catalog',
    });
    g.edge(targetId, id, 'fires');
  }
  for (const pub of catalog.publications) {
    const id = `publication:${pub}`;
    g.node({
      id,
      kind: 'publication',
      label: pub,
      what: 'logical replication publication',
      reason: 'every deleted and inserted row is sent to its subscribers',
      found: 'catalog',
    });
    g.edge(targetId, id, 'publishes');
  }
  postgresReaders(catalog, onTargetDb, resolved, config, target.connection, g);
  return targetId;
}

/** Jobs reading the target (or a view over it), then jobs reading those jobs' targets, and on. */
function postgresReaders(
  catalog: CatalogImpact,
  reads: JobReads[],
  resolved: Map<string, string>,
  config: Config,
  connection: string,
  g: ImpactBuilder,
): void {
  // oid → the nodes that stand for it (a table several jobs write has each of them), and its name
  const affected = new Map<string, { ids: Set<string>; name: string }>();
  const mark = (oid: string, id: string, name: string) => {
    const entry = affected.get(oid) ?? { ids: new Set<string>(), name };
    entry.ids.add(id);
    affected.set(oid, entry);
  };
  mark(catalog.target.oid, `rel:${catalog.target.oid}`, catalog.target.name);
  for (const r of [...catalog.dependents, ...catalog.ancestors, ...catalog.partitions]) mark(r.oid, `rel:${r.oid}`, r.name);
  const done = new Set<string>();
  for (let grew = true; grew;) {
    grew = false;
    for (const r of reads) {
      if (done.has(r.job.name)) continue;
      const hits = r.relations.filter((name) => affected.has(resolved.get(name) ?? ''));
      if (hits.length === 0) continue;
      const sources = hits.map((h) => affected.get(resolved.get(h) ?? '')).filter((a) => a !== undefined);
      const via = [...new Set(sources.map((a) => a.name))].join(', ');
      let id = '';
      for (const a of sources)
        for (const from of a.ids)
          id = addJob(g, r.job, from, `its source query reads ${via}: its output is stale until it is rerun over the range`, 'read by job');
      done.add(r.job.name);
      grew = true;
      const w = r.writes && sameDatabase(config, r.writes.connection, connection) ? r.writes.table : undefined;
      const writes = w === undefined ? undefined : resolved.get(w);
      if (writes !== undefined && writes !== catalog.target.oid) mark(writes, id, `${w} (written by job ${r.job.name})`);
    }
  }
}

function s3Target(job: Job, config: Config, g: ImpactBuilder): string {
  const t = job.target;
  if (t.kind !== 's3') throw new Error('not an S3 target');
  const c = config.connections[t.connection];
  const bucket = c?.kind === 's3' ? c.bucket : t.connection;
  return g.node({
    id: 'target',
    kind: 'target',
    label: `s3://${bucket}/${t.path}`,
    what: `the target (${t.format} objects)`,
    reason: 'its partitions in the range are rewritten',
    found: 'job',
  });
}

/** S3 jobs whose source path is the target's path, and jobs reading theirs in turn. */
function s3Readers(job: Job, reads: JobReads[], targetId: string, g: ImpactBuilder): void {
  const t = job.target;
  if (t.kind !== 's3') return;
  const affected = new Map<string, string>([[`${t.connection}|${t.path}`, targetId]]);
  const done = new Set<string>();
  for (let grew = true; grew;) {
    grew = false;
    for (const r of reads) {
      const from = r.s3Source ? affected.get(r.s3Source) : undefined;
      if (done.has(r.job.name) || from === undefined) continue;
      const id = addJob(
        g,
        r.job,
        from,
        `its source path is ${r.job.source.kind === 's3' ? r.job.source.path : ''}, which this backfill rewrites`,
        'read by job',
      );
      done.add(r.job.name);
      grew = true;
      if (r.job.target.kind === 's3') affected.set(`${r.job.target.connection}|${r.job.target.path}`, id);
    }
  }
}

/** What the job itself reads: its source relations (parsed) or its S3 source. */
async function sourceNodes(job: Job, config: Config, targetId: string, g: ImpactBuilder): Promise<void> {
  const s = job.source;
  if (s.kind === 's3') {
    const c = config.connections[s.connection];
    const id = g.node({
      id: 'source:s3',
      kind: 'source',
      label: `s3://${c?.kind === 's3' ? c.bucket : s.connection}/${s.path}`,
      what: `the job's source (${s.format} objects)`,
      reason: 'read to recompute each partition',
      found: 'job',
    });
    g.edge(id, targetId, 'recomputed into');
    return;
  }
  let relations: string[];
  try {
    relations = (await checkReadOnlySelect(s.query, { field: 'source.query', where: `job "${job.name}"` })).relations;
  } catch (err) {
    g.problems.push(`the job's own source query could not be parsed: ${describeError(err)}`);
    relations = [];
  }
  for (const name of relations) {
    const id = g.node({
      id: `source:${name}`,
      kind: 'source',
      label: name,
      what: 'source relation',
      reason: "read by the job's source query",
      found: 'job',
    });
    g.edge(id, targetId, 'recomputed into');
  }
}
