/**
 * The impact scope of a backfill as a graph a lead can judge without context (source article
 * 001: "영향 테이블 시각화 (lineage 그래프 한 장)"): what feeds the target, what reads it, what
 * fires on it — found in the target's catalog and in the workspace's other jobs, beside what the
 * job's author declared. Every node says what it is and why it is affected; the ones that are
 * stale once the run lands (materialized views, downstream jobs) are marked. Pure data, so the
 * app, the sign-off request and the incident note draw the same graph.
 */

export type ImpactNodeKind =
  | 'source'
  | 'target'
  | 'view'
  | 'materialized-view'
  | 'partition'
  | 'parent'
  | 'references'
  | 'referenced-by'
  | 'trigger'
  | 'publication'
  | 'job'
  | 'declared';

export interface ImpactNode {
  /** unique within the graph: `view:public.v_orders`, `job:refund-weekly` */
  id: string;
  kind: ImpactNodeKind;
  /** the object's name as people write it */
  label: string;
  /** what it is, in a few words: "materialized view", "job refund-weekly (writes mart.refund_weekly)" */
  what: string;
  /** why the backfill affects it */
  reason: string;
  /** out of date once the run lands, until it is refreshed or rerun */
  stale: boolean;
  /** named in the job's classification.downstream */
  declared: boolean;
  /** where it was found */
  found: 'catalog' | 'workspace' | 'declared' | 'job';
  /** a downstream job: its name, its target and its unit (the Close step offers it a plan) */
  job?: { name: string; target: string; unit: string };
}

export interface ImpactEdge {
  from: string;
  to: string;
  /** "reads", "references", "fires", "publishes", "rows land in" … */
  label: string;
}

export interface ImpactGraph {
  nodes: ImpactNode[];
  edges: ImpactEdge[];
  /** what could not be looked at, and why (a catalog the role may not read, a broken job file) */
  problems: string[];
}

export const STALE_KINDS: ReadonlySet<ImpactNodeKind> = new Set(['materialized-view', 'job']);

/** Builds a graph node by node, keeping ids unique (the first finding of a node wins, later ones add reasons). */
export class ImpactBuilder {
  private readonly nodes = new Map<string, ImpactNode>();
  private readonly edges = new Map<string, ImpactEdge>();
  readonly problems: string[] = [];

  node(n: Omit<ImpactNode, 'declared' | 'stale'> & { stale?: boolean; declared?: boolean }): string {
    const existing = this.nodes.get(n.id);
    if (existing) {
      if (!existing.reason.includes(n.reason)) existing.reason = `${existing.reason}; ${n.reason}`;
      return n.id;
    }
    this.nodes.set(n.id, { ...n, stale: n.stale ?? STALE_KINDS.has(n.kind), declared: n.declared ?? false });
    return n.id;
  }

  has(id: string): boolean {
    return this.nodes.has(id);
  }

  edge(from: string, to: string, label: string): void {
    if (from !== to) this.edges.set(`${from}→${to}`, { from, to, label });
  }

  /** Marks the node that a declared downstream name matches, or adds it as declared only. */
  declare(name: string, targetId: string): void {
    const wanted = name.toLowerCase();
    const match = [...this.nodes.values()].find(
      (n) => n.kind !== 'source' && n.kind !== 'target' && (n.label.toLowerCase() === wanted || n.job?.name === wanted),
    );
    if (match) {
      match.declared = true;
      return;
    }
    const id = this.node({
      id: `declared:${name}`,
      kind: 'declared',
      label: name,
      what: 'declared downstream',
      reason: "named in the job's classification.downstream; not found in the catalog or the workspace",
      found: 'declared',
      stale: true,
      declared: true,
    });
    this.edge(targetId, id, 'declared');
  }

  build(): ImpactGraph {
    return { nodes: [...this.nodes.values()], edges: [...this.edges.values()], problems: [...this.problems] };
  }
}

/**
 * The downstream jobs in the order they must be rerun, each with the jobs it waits for: a job
 * after every job whose output it reads (Kahn's order over the graph's job → … → job paths;
 * ties by name). A cycle is broken at the name that sorts first.
 */
export function downstreamJobsInOrder(graph: ImpactGraph): { node: ImpactNode; after: string[] }[] {
  const jobs = graph.nodes.filter((n) => n.kind === 'job');
  const ids = new Set(jobs.map((j) => j.id));
  // job A → job B when B is reachable from A without passing another job
  const after = new Map<string, Set<string>>(jobs.map((j) => [j.id, new Set<string>()]));
  const out = new Map<string, string[]>();
  for (const e of graph.edges) out.set(e.from, [...(out.get(e.from) ?? []), e.to]);
  for (const j of jobs) {
    const seen = new Set<string>([j.id]);
    const stack = [...(out.get(j.id) ?? [])];
    while (stack.length > 0) {
      const id = stack.pop() as string;
      if (seen.has(id)) continue;
      seen.add(id);
      if (ids.has(id)) after.get(id)?.add(j.id);
      else stack.push(...(out.get(id) ?? []));
    }
  }
  const ordered: { node: ImpactNode; after: string[] }[] = [];
  const done = new Set<string>();
  const byName = [...jobs].sort((a, b) => a.label.localeCompare(b.label));
  const label = (id: string) => jobs.find((j) => j.id === id)?.label ?? id;
  while (ordered.length < jobs.length) {
    const ready = byName.find((j) => !done.has(j.id) && [...(after.get(j.id) ?? [])].every((d) => done.has(d)));
    const next = ready ?? byName.find((j) => !done.has(j.id));
    if (!next) break;
    done.add(next.id);
    ordered.push({ node: next, after: [...(after.get(next.id) ?? [])].map(label).sort() });
  }
  return ordered;
}

/** Counts for one line of text: "2 views, 1 materialized view (stale), 1 foreign key, 2 jobs". */
export function describeImpact(graph: ImpactGraph): string {
  const count = new Map<ImpactNodeKind, number>();
  for (const n of graph.nodes) count.set(n.kind, (count.get(n.kind) ?? 0) + 1);
  const parts: string[] = [];
  const say = (kind: ImpactNodeKind, one: string, many: string) => {
    const n = count.get(kind) ?? 0;
    if (n > 0) parts.push(`${n} ${n === 1 ? one : many}`);
  };
  say('view', 'view', 'views');
  say('materialized-view', 'materialized view', 'materialized views');
  say('referenced-by', 'table referencing it', 'tables referencing it');
  say('references', 'table it references', 'tables it references');
  say('trigger', 'trigger', 'triggers');
  say('publication', 'publication', 'publications');
  say('partition', 'partition', 'partitions');
  say('parent', 'parent table', 'parent tables');
  say('job', 'downstream job', 'downstream jobs');
  say('declared', 'declared only', 'declared only');
  const stale = graph.nodes.filter((n) => n.stale).length;
  return parts.length === 0 ? 'nothing reads the target' : `${parts.join(', ')}${stale > 0 ? `; ${stale} stale after the run` : ''}`;
}

const tags = (n: ImpactNode) => `${n.stale ? ' [STALE after the run]' : ''}${n.declared ? ' [declared]' : ''}`;

/** The graph as indented lines from the target (sources above it), each node with what it is and why. */
export function impactTree(graph: ImpactGraph): string[] {
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const out = new Map<string, { to: string; label: string }[]>();
  for (const e of graph.edges) out.set(e.from, [...(out.get(e.from) ?? []), { to: e.to, label: e.label }]);
  const lines: string[] = [];
  for (const s of graph.nodes.filter((n) => n.kind === 'source')) lines.push(`${s.label} (${s.what}) →`);
  const seen = new Set<string>();
  const walk = (id: string, depth: number, via: string) => {
    const n = byId.get(id);
    if (!n || seen.has(id)) return;
    seen.add(id);
    const pad = '  '.repeat(depth);
    lines.push(`${pad}${via ? `${via}: ` : ''}${n.label} — ${n.what}${tags(n)}`);
    if (n.kind !== 'target') lines.push(`${pad}    why: ${n.reason}`);
    for (const e of out.get(id) ?? []) walk(e.to, depth + 1, e.label);
  };
  const target = graph.nodes.find((n) => n.kind === 'target');
  if (target) walk(target.id, 0, '');
  for (const n of graph.nodes) if (!seen.has(n.id) && n.kind !== 'source') walk(n.id, 1, 'also');
  return lines;
}
