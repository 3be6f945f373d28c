/**
 * Throttling in the app, in real Chromium on the real engine and PostgreSQL: a session queues
 * behind the backfill's locks mid-run (a migration, say). The Execute step says the run is
 * throttled — which signal, its value against its level, for how long — and draws the signal
 * against its levels beside rows per minute; the partition in flight finishes, the migration
 * gets its lock, and the run goes on by itself to the end, equal to the oracle. Screenshots go
 * to test-results/e2e/.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createOrderMart, seedOrders } from '../support/dataset.ts';
import { buildOracle, martMd5 } from '../support/oracle.ts';
import { adminClient, createTestDatabase, type TestDatabase } from '../support/pg.ts';
import { makeWorkspace, pgConfig, type Workspace } from '../support/workspace.ts';
import { chromiumOrSkip, closeWorkspaceApp, openStep, openWorkspaceApp, RENDERER, shot, SHOTS, type Engine } from './support.ts';

const browserPath = chromiumOrSkip();
const RUN = 'bf-e2e-throttle';

// Two seconds a partition, so a session can queue behind one while it is written.
const SLOW_JOB = `name: slow-orders
unit: day
timezone: UTC
classification: { billing: false }
source:
  connection: warehouse
  query: |
    select cast(paid_at as date) as order_date, customer_id, count(*)::bigint as orders, sum(paid_amount) as paid_amount
    from orders cross join (select pg_sleep(2)) as pause
    where paid_at >= :partition_start and paid_at < :partition_end group by 1, 2
target: { connection: warehouse, table: mart.mart_order_daily, partition_column: order_date, key: [order_date, customer_id] }
write_mode: overwrite-partition
validation:
  - name: orders reconcile
    source: select count(*) as rows from orders where paid_at >= :partition_start and paid_at < :partition_end
    target: select coalesce(sum(orders), 0) as rows from mart.mart_order_daily where order_date >= :partition_start and order_date < :partition_end
`;

describe.skipIf(browserPath.path === null)('throttling, in the app', () => {
  let db: TestDatabase;
  let ws: Workspace;
  let browser: Browser;
  let engine: Engine;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    if (!existsSync(join(RENDERER, 'index.html')))
      throw new Error(`${RENDERER} is not built: run \`npm run build:renderer\` (npm test does)`);
    db = await createTestDatabase(inject('pgA'), 'e2e_throttle');
    await seedOrders(db.client, { from: '2026-04-01', days: 60, ordersPerDay: 150, seed: 17 });
    await createOrderMart(db.client);
    await buildOracle(db.client);
    ws = makeWorkspace('e2e-throttle', { WAREHOUSE_PASSWORD: db.password });
    ws.writeConfig(pgConfig({ warehouse: { url: db.url, passwordEnv: 'WAREHOUSE_PASSWORD' } }));
    ws.writeJob('slow-orders', SLOW_JOB);
    ({ browser, engine, page, errors } = await openWorkspaceApp(browserPath.path as string, ws));
  });

  afterAll(() => closeWorkspaceApp({ browser, engine }, [db], ws?.dir));

  const metric = (name: string) => page.getByTestId('execute-metrics').locator('div', { hasText: name }).locator('dd');

  it('the Workspace screen keeps a secret for a probe or a webhook by name, never showing its value', async () => {
    await page.goto(`${engine.origin}/#/workspace`);
    await page.getByLabel('Variable name').fill('SLACK_WEBHOOK_URL');
    await page.getByLabel('Value').fill('https://hooks.slack.com/services/T0/B0/e2e-secret');
    await page.getByLabel('this session only').last().check();
    await page.getByRole('button', { name: 'Save the secret' }).click();
    const rows = page.getByRole('table', { name: 'Saved secrets' }).locator('tbody tr');
    await expect.poll(() => rows.first().textContent()).toBe('SLACK_WEBHOOK_URLthis session only–Remove');
    expect(await page.content()).not.toContain('e2e-secret');
    await page.getByRole('region', { name: 'Secrets' }).screenshot({ path: join(SHOTS, '22-workspace-secrets.png') });
  });

  it('plans with a throttle level and a critical level for lock waits, and walks to Execute', async () => {
    await page.goto(`${engine.origin}/#/workspace`);
    await page.getByRole('button', { name: 'New plan' }).click();
    await page.getByLabel('Job').selectOption('slow-orders');
    await page.getByLabel('Request id (the run id)').fill(RUN);
    await page.getByLabel('Reason').fill('throttle e2e');
    await page.getByLabel('From (inclusive)').fill('2026-05-01');
    await page.getByLabel('To (exclusive)').fill('2026-05-07');
    await page.getByLabel('Pause between partitions (ms)').fill('300');
    await page.getByLabel('Max lock wait (ms)').fill('300');
    await page.getByLabel('Critical lock wait (ms)').fill('60000');
    await shot(page, '19-plan-throttle-levels');
    await page.getByRole('button', { name: 'Create the runbook' }).click();
    await expect.poll(() => page.url()).toContain(`#/runbook/${RUN}`);
    await page.getByRole('button', { name: 'Run the sanity checks' }).click();
    await openStep(page, 2, 'Snapshot backup');
    await page.getByRole('button', { name: 'Take the snapshot' }).click();
    await expect.poll(() => page.getByTestId('snapshot-location').textContent()).toMatch(/backfill_runbook_snapshots/);
    await openStep(page, 3, 'Impact scope');
    await page.getByRole('button', { name: 'Run the dry run' }).click();
    await expect.poll(() => page.getByTestId('impact-totals').textContent(), { timeout: 60_000 }).toMatch(/over 6 partitions/);
    await openStep(page, 5, 'Execute');
  });

  it('a session queued behind the backfill throttles it: the step says why, for how long, and draws the signal against its levels', async () => {
    const migration: pg.Client = await adminClient(inject('pgA'), db.name);
    await page.getByRole('button', { name: 'Start executing' }).click();
    await expect.poll(() => metric('Published').textContent(), { timeout: 30_000 }).toMatch(/^1 \/ 6/);
    await new Promise((res) => setTimeout(res, 500)); // inside the second partition
    await migration.query('set lock_timeout = 30000');
    await migration.query('begin');
    const locked = migration.query('lock table mart.mart_order_daily in access exclusive mode');
    const banner = page.getByTestId('throttle-state');
    await expect
      .poll(() => banner.textContent(), { timeout: 20_000 })
      .toMatch(/^Throttled for \d+ s: lock wait behind the backfill's locks: \d+ ms > 300 ms\. The partition in flight finishes/);
    const chart = page.getByTestId('signal-chart');
    await expect.poll(() => chart.locator('canvas').count(), { timeout: 20_000 }).toBeGreaterThan(0);
    expect(await chart.getAttribute('aria-label')).toMatch(
      /^lock wait behind the backfill's locks over time against its levels \(throttle above 300 ms, halt above 60000 ms\), with rows per minute; throttled 1 time\(s\), \d+ s$/,
    );
    await shot(page, '20-execute-throttled');
    await locked; // granted once the partition in flight committed
    await migration.query('rollback');
    await migration.end();
  });

  it('goes on by itself once the signal settles, to the end, equal to the oracle', async () => {
    await expect
      .poll(() => page.getByTestId('step-detail').textContent(), { timeout: 90_000 })
      .toBe('Succeeded: 6/6 published, reconciled.');
    expect(await metric('Throttled').textContent()).toMatch(/^1 time\(s\), \d+ s$/);
    expect(await page.getByTestId('signal-now').textContent()).toMatch(/^now lock wait behind the backfill's locks: 0 ms ≤ 300 ms/);
    await shot(page, '21-execute-throttle-ended');
    expect(await martMd5(db.client, '2026-05-01', '2026-05-07')).toBe(
      await martMd5(db.client, '2026-05-01', '2026-05-07', 'oracle.mart_order_daily'),
    );
    // ECharts draws on a canvas: no inline style the CSP would refuse, no error on the page.
    expect(errors).toEqual([]);
  });
});
