/**
 * The impact scope derived from the catalog and the workspace (issue 15): a schema with a view
 * on a view, a materialized view, foreign keys in and out, a trigger and a publication on the
 * target, and workspace jobs reading it — every one appears in the graph with its reason, through
 * the CLI's `--json` and the app's dry run; the decoys (a name in a string literal, a table of
 * another database) do not; the Close step's downstream plans come in dependency order.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { ImpactGraph, ImpactNode } from '../../shared/impact.ts';
import type { RunbookService } from '../../electron/engine/runbook/service.ts';
import { appDryRun, appService, cliJson } from '../support/app.ts';
import { seedOrders } from '../support/dataset.ts';
import { IMPACT_SCHEMA, writeImpactJobs } from '../support/impactSchema.ts';
import { createTestDatabase } from '../support/pg.ts';
import { makeWorkspace, pgConfig, runCli, type Workspace } from '../support/workspace.ts';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let other: Awaited<ReturnType<typeof createTestDatabase>>;
let ws: Workspace;
let app: RunbookService;

const node = (graph: ImpactGraph, label: string): ImpactNode | undefined => graph.nodes.find((n) => n.label === label);

function expectEverything(graph: ImpactGraph): void {
  const expectNode = (label: string, kind: string, reason: RegExp, stale = false) => {
    const n = node(graph, label);
    expect(n, `${label} in ${graph.nodes.map((x) => x.label).join(', ')}`).toBeDefined();
    expect(n?.kind).toBe(kind);
    expect(n?.reason).toMatch(reason);
    expect(n?.stale, `${label} stale`).toBe(stale);
  };
  expectNode('mart.daily', 'target', /recomputed/);
  expectNode('mart.v_daily', 'view', /reads the target/);
  expectNode('mart.v_weekly', 'view', /reads mart\.v_daily/);
  expectNode('mart.mv_monthly', 'materialized-view', /keeps the old numbers until REFRESH MATERIALIZED VIEW mart\.mv_monthly/, true);
  expectNode('mart.customers', 'references', /must match a row of mart\.customers/);
  expectNode('mart.daily_notes', 'referenced-by', /ON DELETE CASCADE/, true);
  expectNode('daily_log', 'trigger', /fires on the run's writes \(after insert or delete\)/);
  expectNode('mart_pub', 'publication', /sent to its subscribers/);
  expectNode('weekly-rollup', 'job', /its source query reads mart\.daily/, true);
  expectNode('customer-ltv', 'job', /its source query reads mart\.daily/, true);
  expectNode('dashboard-feed', 'job', /its source query reads mart\.v_weekly/, true);
  expectNode('quarterly-rollup', 'job', /its source query reads mart\.weekly \(written by job weekly-rollup\)/, true);
  expectNode('dashboard.revenue_weekly', 'declared', /not found in the catalog or the workspace/, true);
  expectNode('orders', 'source', /read by the job's source query/);
  expect(node(graph, 'mart.v_weekly')?.declared).toBe(true);
  // Decoys: a table's name in a string literal, and a job on another database with a table of the same name.
  expect(node(graph, 'literal-only')).toBeUndefined();
  expect(node(graph, 'elsewhere')).toBeUndefined();
  // Edges: view on view, and the second-level job hangs off the first.
  const edge = (from: string, to: string) =>
    graph.edges.some(
      (e) => e.from === graph.nodes.find((n) => n.label === from)?.id && e.to === graph.nodes.find((n) => n.label === to)?.id,
    );
  expect(edge('mart.v_daily', 'mart.v_weekly')).toBe(true);
  expect(edge('weekly-rollup', 'quarterly-rollup')).toBe(true);
  expect(edge('mart.daily', 'mart.mv_monthly')).toBe(true);
  expect(graph.problems).toEqual([]);
}

beforeAll(async () => {
  db = await createTestDatabase(inject('pgA'), 'impact');
  other = await createTestDatabase(inject('pgA'), 'impact_other');
  await seedOrders(db.client, { from: '2026-05-01', days: 10, ordersPerDay: 50, seed: 7 });
  await db.client.query(IMPACT_SCHEMA);
  await other.client.query('create schema mart; create table mart.daily (order_date date, amount numeric)');
  ws = makeWorkspace('impact', { WAREHOUSE_PASSWORD: db.password });
  ws.writeConfig(
    pgConfig({
      warehouse: { url: db.url, passwordEnv: 'WAREHOUSE_PASSWORD' },
      archive: { url: other.url, passwordEnv: 'WAREHOUSE_PASSWORD' },
    }),
  );
  writeImpactJobs(ws);
  app = appService(ws, { WAREHOUSE_PASSWORD: db.password });
});

afterAll(async () => {
  await app?.close();
  await db?.drop();
  await other?.drop();
});

describe('the impact scope of mart.daily', () => {
  it('the CLI dry run finds every dependent in the catalog and the workspace, each with its reason', async () => {
    const r = await cliJson(ws, ['daily-mart', '--from', '2026-05-01', '--to', '2026-05-04', '--run-id', 'imp-1', '--dry-run']);
    expect(r.code, r.stderr).toBe(0);
    expectEverything(r.of<{ impact: ImpactGraph }>('dry-run')?.impact as ImpactGraph);
    // The terminal's tree: each dependent under what it reads, with why.
    const text = await runCli(ws, ['daily-mart', '--from', '2026-05-01', '--to', '2026-05-04', '--run-id', 'imp-1', '--dry-run']);
    if (process.env.SHOW_IMPACT) console.log(text.stdout);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      /Impact scope: 2 views, 1 materialized view, 1 table referencing it, 1 table it references, 1 trigger, 1 publication, 4 downstream jobs, 1 declared only; \d+ stale after the run/,
    );
    expect(text.stdout).toMatch(/\n {6}read by: mart\.v_weekly — view \[declared\]\n {10}why: reads mart\.v_daily/);
    expect(text.stdout).toMatch(
      /read by job: quarterly-rollup — job quarterly-rollup \(writes mart\.quarterly, monthly\) \[STALE after the run\]/,
    );
  });

  it("the app's dry run carries the same graph, and the sign-off request carries it hashed", async () => {
    const view = await appDryRun(app, {
      request_id: 'imp-app',
      job: 'daily-mart',
      range: { from: '2026-05-01', to: '2026-05-04' },
      write_mode: 'overwrite-partition',
    });
    expect(view.impact).not.toBeNull();
    expectEverything(view.impact as ImpactGraph);
    const request = JSON.parse((await app.runbook.signoffRequest({ runId: 'imp-app' })).text) as { impact: { bodyJson: string } };
    expectEverything((JSON.parse(request.impact.bodyJson) as { impact: ImpactGraph }).impact);
  });

  it('the Close step offers a plan for each downstream job over the same range, in dependency order', async () => {
    const plans = await app.run.downstreamPlans({ runId: 'imp-app' });
    const order = plans.map((p) => p.job);
    expect(order).toEqual(['customer-ltv', 'dashboard-feed', 'weekly-rollup', 'quarterly-rollup']);
    expect(plans.find((p) => p.job === 'weekly-rollup')?.plan).toMatchObject({
      job: 'weekly-rollup',
      range: { from: '2026-05-01', to: '2026-05-04' },
      write_mode: 'overwrite-partition',
      request_id: 'imp-app-then-weekly-rollup',
    });
    // A monthly job gets the months that cover the range.
    expect(plans.find((p) => p.job === 'quarterly-rollup')?.plan.range).toEqual({ from: '2026-05', to: '2026-06' });
    expect(plans.find((p) => p.job === 'quarterly-rollup')?.after).toEqual(['weekly-rollup']);
  });
});

describe("the incident note's picture of it", () => {
  it('draws every node of the graph, stale ones dashed, in a self-contained HTML note (screenshot kept)', async () => {
    const range = ['--from', '2026-05-01', '--to', '2026-05-04'];
    expect((await runCli(ws, ['daily-mart', ...range, '--run-id', 'imp-note', '--dry-run'])).code).toBe(0);
    const run = await runCli(ws, ['daily-mart', ...range, '--run-id', 'imp-note']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const html = join(ws.dir, 'note.html');
    expect((await runCli(ws, ['export', '--run-id', 'imp-note', '--format', 'html', '--out', html])).code).toBe(0);
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
      const requests: string[] = [];
      page.on('request', (r) => requests.push(r.url()));
      await page.goto(pathToFileURL(html).href);
      const figure = page.locator('section:has(h2:text("Impact scope and red flags")) figure.chart');
      const labels = await figure.locator('svg g text:first-of-type').allTextContents();
      for (const label of [
        'mart.daily',
        'mart.v_daily',
        'mart.v_weekly',
        'mart.mv_monthly',
        'mart.customers',
        'mart.daily_notes',
        'daily_log',
        'mart_pub',
        'weekly-rollup',
        'customer-ltv',
        'dashboard-feed',
        'quarterly-rollup',
        'dashboard.revenue_weekly',
        'orders',
      ])
        expect(labels, label).toContain(label);
      // Stale nodes are dashed: the materialized view, the cascading table, the four jobs, the declared one.
      expect(await figure.locator('rect[stroke-dasharray]').count()).toBe(7);
      expect(requests).toEqual([pathToFileURL(html).href]);
      const out = resolve(import.meta.dirname, '../../test-results/notes');
      mkdirSync(out, { recursive: true });
      await figure.screenshot({ path: join(out, 'impact-graph.png') });
      await page.close();
    } finally {
      await browser.close();
    }
  });
});
