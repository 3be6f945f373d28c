/** The impact graph's pure parts: downstream order, covering ranges, declared names, and S3 readers found by path. */
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { coveringRange, downstreamPlans } from '../../shared/downstreamPlans.ts';
import { ImpactBuilder, downstreamJobsInOrder, type ImpactGraph } from '../../shared/impact.ts';
import { configSchema, jobSchema } from '../../shared/schemas.ts';
import { impactScope } from '../../electron/engine/impact/impactScope.ts';

function jobsGraph(edges: [string, string][]): ImpactGraph {
  const g = new ImpactBuilder();
  g.node({ id: 'target', kind: 'target', label: 't', what: 'the target', reason: 'r', found: 'job' });
  const names = new Set(edges.flat().filter((n) => n !== 'target'));
  for (const name of names)
    g.node({
      id: `job:${name}`,
      kind: 'job',
      label: name,
      what: 'job',
      reason: `reads ${name}`,
      found: 'workspace',
      job: { name, target: name, unit: 'day' },
    });
  for (const [a, b] of edges) g.edge(a === 'target' ? a : `job:${a}`, `job:${b}`, 'read by job');
  return g.build();
}

describe('downstream jobs in order', () => {
  it('runs a job after every job whose output it reads (a diamond), ties by name', () => {
    const g = jobsGraph([
      ['target', 'b'],
      ['target', 'a'],
      ['a', 'c'],
      ['b', 'c'],
      ['c', 'd'],
      ['target', 'z'],
    ]);
    expect(downstreamJobsInOrder(g).map((j) => `${j.node.label}<${j.after.join('+')}`)).toEqual(['a<', 'b<', 'c<a+b', 'd<c', 'z<']);
  });

  it('a cycle does not hang: it is broken at the first name', () => {
    const g = jobsGraph([
      ['target', 'x'],
      ['x', 'y'],
      ['y', 'x'],
    ]);
    expect(downstreamJobsInOrder(g).map((j) => j.node.label)).toEqual(['x', 'y']);
  });

  it('each gets a plan over the range in its own unit', () => {
    const plans = downstreamPlans(
      jobsGraph([['target', 'a']]),
      { runId: 'bf-1', range: { from: '2026-05-01', to: '2026-07-01' } },
      () => 'upsert',
    );
    expect(plans[0]?.plan).toEqual({
      request_id: 'bf-1-then-a',
      job: 'a',
      range: { from: '2026-05-01', to: '2026-07-01' },
      write_mode: 'upsert',
      reason: 'downstream of backfill bf-1: reads a',
    });
  });
});

describe('covering range', () => {
  it.each<[string, string, 'hour' | 'day' | 'month', string, string]>([
    ['2026-05-01', '2026-05-04', 'month', '2026-05', '2026-06'],
    ['2026-05-01', '2026-06-01', 'month', '2026-05', '2026-06'],
    ['2026-12-10', '2026-12-31', 'month', '2026-12', '2027-01'],
    ['2026-05', '2026-07', 'day', '2026-05-01', '2026-07-01'],
    ['2026-05-01', '2026-05-03', 'hour', '2026-05-01T00', '2026-05-03T00'],
    ['2026-05-01T05', '2026-05-02T01', 'day', '2026-05-01', '2026-05-03'],
  ])('%s → %s as %s', (from, to, unit, f, t) => {
    expect(coveringRange({ from, to }, unit)).toEqual({ from: f, to: t });
  });
});

describe('declared downstream', () => {
  it('marks the node a declared name matches, and adds one for a name found nowhere', () => {
    const g = new ImpactBuilder();
    g.node({ id: 'target', kind: 'target', label: 'mart.t', what: 't', reason: 'r', found: 'job' });
    g.node({ id: 'rel:2', kind: 'view', label: 'mart.v', what: 'view', reason: 'reads', found: 'catalog' });
    g.declare('MART.V', 'target');
    g.declare('dashboard.x', 'target');
    const graph = g.build();
    expect(graph.nodes.find((n) => n.id === 'rel:2')?.declared).toBe(true);
    expect(graph.nodes.find((n) => n.label === 'dashboard.x')).toMatchObject({ kind: 'declared', declared: true, stale: true });
    expect(graph.edges).toContainEqual({ from: 'target', to: 'declared:dashboard.x', label: 'declared' });
  });
});

describe('S3 readers', () => {
  it('finds jobs whose source path is the target path, and their readers, on the same bucket only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'impact-s3-'));
    mkdirSync(join(dir, 'jobs'));
    const s3Job = (name: string, source: string, target: string, connection = 'lake') =>
      `name: ${name}\nunit: hour\nsource: { kind: s3, connection: ${connection}, path: "${source}" }\ntarget: { kind: s3, connection: lake, path: "${target}" }\nwrite_mode: overwrite-partition\n`;
    writeFileSync(join(dir, 'jobs', 'refine.yaml'), s3Job('refine', 'raw/dt={date}/h={hour}/', 'refined/dt={date}/h={hour}/'));
    writeFileSync(join(dir, 'jobs', 'rollup.yaml'), s3Job('rollup', 'refined/dt={date}/h={hour}/', 'rollup/{date}_{hour}'));
    writeFileSync(join(dir, 'jobs', 'other-bucket.yaml'), s3Job('other-bucket', 'raw/dt={date}/h={hour}/', 'x/{date}_{hour}', 'archive'));
    const config = configSchema.parse({
      connections: {
        lake: { kind: 's3', bucket: 'lake' },
        archive: { kind: 's3', bucket: 'archive' },
        w: { kind: 'postgres', url: 'postgres://u@h/db' },
      },
    });
    const job = jobSchema.parse({
      name: 'export',
      unit: 'hour',
      source: { connection: 'w', query: 'select * from app_events e join users u using (user_id) where e.t >= :partition_start' },
      target: { kind: 's3', connection: 'lake', path: 'raw/dt={date}/h={hour}/' },
      write_mode: 'overwrite-partition',
    });
    const graph = await impactScope({ job, config, env: {}, jobsDir: join(dir, 'jobs') });
    expect(graph.nodes.map((n) => `${n.kind}:${n.label}`).sort()).toEqual(
      ['job:refine', 'job:rollup', 'source:app_events', 'source:users', 'target:s3://lake/raw/dt={date}/h={hour}/'].sort(),
    );
    expect(graph.nodes.find((n) => n.label === 'rollup')?.reason).toContain('its source path is refined/dt={date}/h={hour}/');
    expect(downstreamJobsInOrder(graph).map((j) => j.node.label)).toEqual(['refine', 'rollup']);
  });
});
