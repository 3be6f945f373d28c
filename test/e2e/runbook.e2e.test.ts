/**
 * The whole manual runbook in real Chromium, on the real engine, on a real PostgreSQL:
 * plan → sanity → snapshot → dry run → sign-off → execute (a stop condition fires and is shown;
 * resumed; the engine is killed mid-run and restarted; resumed again) → row-count comparison →
 * close, then the run is found in History. Screenshots of each step go to test-results/e2e/.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createOrderMart, seedOrders } from '../support/dataset.ts';
import { buildOracle, martMd5 } from '../support/oracle.ts';
import { createTestDatabase, type TestDatabase } from '../support/pg.ts';
import { makeWorkspace, orderMartJob, pgConfig, type Workspace } from '../support/workspace.ts';
import {
  chromiumOrSkip,
  closeWorkspaceApp,
  openApp,
  openStep,
  openWorkspaceApp,
  RENDERER,
  shot,
  startEngine,
  type Engine,
} from './support.ts';

const browserPath = chromiumOrSkip();
const RUN = 'bf-e2e-orders';
const PASSPHRASE = 'correct horse battery staple';
const QUALITY = `quality:
  - { kind: null_rate, table: orders, column: customer_id, time_column: paid_at, max: 0.01, severity: fail }
  - { kind: row_count_outlier, table: orders, time_column: paid_at, window: 7, max_ratio: 3, severity: warn }
`;

describe.skipIf(browserPath.path === null)('the runbook, end to end in Chromium', () => {
  let db: TestDatabase;
  let ws: Workspace;
  let browser: Browser;
  let engine: Engine;
  let page: Page;
  let errors: string[];
  const panicFile = () => join(ws.dir, 'STOP-BACKFILL');

  beforeAll(async () => {
    if (!existsSync(join(RENDERER, 'index.html')))
      throw new Error(`${RENDERER} is not built: run \`npm run build:renderer\` (npm test does)`);
    db = await createTestDatabase(inject('pgA'), 'e2e');
    await seedOrders(db.client, { from: '2026-04-01', days: 60, ordersPerDay: 150, seed: 11 });
    await createOrderMart(db.client);
    await buildOracle(db.client);
    // What the bug left behind: the first five days of May with amounts 10% short.
    await db.client.query(`insert into mart.mart_order_daily
      select order_date, customer_id, orders, round(paid_amount * 0.9, 2) from oracle.mart_order_daily
      where order_date >= '2026-05-01' and order_date < '2026-05-06'`);
    ws = makeWorkspace('e2e', { WAREHOUSE_PASSWORD: db.password });
    ws.writeConfig(pgConfig({ warehouse: { url: db.url, passwordEnv: 'WAREHOUSE_PASSWORD' } }));
    ws.writeJob('order-daily-mart', orderMartJob({ extra: QUALITY }));
    ({ browser, engine, page, errors } = await openWorkspaceApp(browserPath.path as string, ws));
  });

  afterAll(() => closeWorkspaceApp({ browser, engine }, [db], ws?.dir));

  const step = (n: number, title: string) => openStep(page, n, title);
  const metric = (name: string) => page.getByTestId('execute-metrics').locator('div', { hasText: name }).locator('dd');
  const published = async () => Number(((await metric('Published').textContent()) ?? '0').split('/')[0]?.trim());

  it('a lead identity is created on the Workspace screen', async () => {
    await page.goto(`${engine.origin}/#/workspace`);
    await expect.poll(() => page.getByText('No identities yet.').isVisible()).toBe(true);
    await page.getByLabel('Identity name').fill('lead');
    await page.getByLabel('Passphrase (8+ characters)').fill(PASSPHRASE);
    await page.getByRole('button', { name: 'Create the identity' }).click();
    await expect
      .poll(() => page.locator('li', { hasText: 'key on this computer' }).textContent())
      .toMatch(/^lead lead [0-9a-f]{16} · key on this computer$/);
    await shot(page, '00-workspace');
  });

  it('1. plan: the form shows partitions, tier and red flags as you type', async () => {
    await page.getByRole('button', { name: 'New plan' }).click();
    await page.getByLabel('Job').selectOption('order-daily-mart');
    await page.getByLabel('Request id (the run id)').fill(RUN);
    await page.getByLabel('Reason').fill('refund reason mapping bug (e2e)');
    await page.getByLabel('From (inclusive)').fill('2026-05-01');
    await page.getByLabel('To (exclusive)').fill('2026-05-11');
    await page.getByLabel('Pause between partitions (ms)').fill('1500');
    await page.getByLabel('Max row difference vs dry run (ratio)').fill('0.5');
    await page.getByLabel('Panic file (its existence stops the run)').fill(panicFile());
    await page.getByLabel('Requested by').fill('alice');
    await expect.poll(() => page.getByTestId('range-words').textContent()).toBe('10 daily partitions, 2026-05-01 to 2026-05-10 inclusive');
    expect(await page.getByTestId('tier').textContent()).toBe('manualbilling data');
    expect(await page.getByTestId('red-flags').textContent()).toContain('no-dry-run');
    await shot(page, '01-plan');
    await page.getByRole('button', { name: 'Create the runbook' }).click();
    await expect.poll(() => page.url()).toContain(`#/runbook/${RUN}`);
  });

  it('2. source sanity check: each rule with its value and threshold', async () => {
    await page.getByRole('button', { name: 'Run the sanity checks' }).click();
    const table = page.getByRole('table', { name: 'Sanity check results' });
    await expect.poll(() => table.locator('tbody tr').count()).toBe(2);
    expect(await table.locator('tbody tr').first().textContent()).toContain('null_rate(orders.customer_id)0≤ 0.01failholds');
    await shot(page, '02-sanity');
  });

  it('3. snapshot: where the copy is, with counts and checksums', async () => {
    await step(2, 'Snapshot backup');
    await page.getByRole('button', { name: 'Take the snapshot' }).click();
    await expect.poll(() => page.getByTestId('snapshot-location').textContent()).toMatch(/backfill_runbook_snapshots/);
    expect(await page.getByText(/^[\d,]+ rows in 10 partitions$/).textContent()).not.toBe('0 rows in 10 partitions');
    await shot(page, '03-snapshot');
  });

  it('4. impact scope: the change by key first, then the dry run per partition, the downstream graph, the range in words', async () => {
    await step(3, 'Impact scope');
    expect(await page.getByTestId('impact-range').textContent()).toBe('10 daily partitions, 2026-05-01 to 2026-05-10 inclusive');
    expect(
      await page.getByRole('img', { name: /feeds mart\.mart_order_daily on warehouse, which feeds dashboard\.revenue_weekly/ }).count(),
    ).toBe(1);
    await page.getByRole('button', { name: 'Run the dry run' }).click();
    await expect
      .poll(() => page.getByTestId('impact-totals').textContent(), { timeout: 30_000 })
      .toMatch(/^[\d,]+ rows now, [\d,]+ after the run, over 10 partitions \(\+[\d,]+ rows\)/);
    // Five days' customers keep their keys and change their amounts; five days' are all added.
    expect(await page.getByTestId('change-headline').textContent()).toMatch(
      /^[\d,]+ keys change the run would make: \d+ added, 0 removed, \d+ changed/,
    );
    // the days the bug left behind keep their rows and change their amounts; the missing ones gain rows
    const cells = async (day: string) =>
      page
        .getByRole('table', { name: 'Dry run per partition' })
        .getByRole('row')
        .filter({ hasText: day })
        .getByRole('cell')
        .allTextContents();
    const [, now, after, change, keys, , amount] = await cells('2026-05-01');
    expect([now, change]).toEqual([after, '0']);
    expect(keys).toMatch(/^0 \/ 0 \/ [1-9]\d*$/);
    expect(amount).toMatch(/\(\+[\d,.]+\)$/);
    const [, now9, after9, change9, keys9] = await cells('2026-05-09');
    expect([now9, change9, keys9]).toEqual(['0', `+${after9 ?? ''}`, `${after9 ?? ''} / 0 / 0`]);
    await shot(page, '04-impact');
  });

  it('5. lead sign-off: the lead signs this exact plan with their own key', async () => {
    await step(4, 'Lead sign-off');
    await page.getByLabel("Lead's passphrase").fill(PASSPHRASE);
    await page.getByLabel('Comment').fill('dry run checked: +rows only in May');
    await page.getByRole('button', { name: 'Sign off this plan' }).click();
    await expect
      .poll(() => page.getByTestId('signoff-valid').textContent())
      .toMatch(/^counts lead, .*: “dry run checked: \+rows only in May”$/);
    await shot(page, '05-signoff');
  });

  it('6. execute: a stop condition fires and the operator is told why', async () => {
    await step(5, 'Execute');
    await page.getByRole('button', { name: 'Start executing' }).click();
    // The manual tier's canary: one partition, reconciled and compared with its snapshot by key; the run waits.
    const canary = page.getByTestId('canary');
    await expect.poll(() => canary.textContent(), { timeout: 60_000 }).toMatch(/2026-05-01snapshot0 added, 0 removed, \d+ changed/);
    expect(await page.getByTestId('stop-reason').textContent()).toMatch(/^Held after its canary/);
    expect(await published()).toBe(1);
    await shot(page, '06-canary');
    await page.getByRole('button', { name: 'Continue the run' }).click();
    await expect.poll(published, { timeout: 60_000 }).toBeGreaterThanOrEqual(2);
    writeFileSync(panicFile(), 'stop');
    const banner = page.getByTestId('stop-reason');
    await expect
      .poll(() => banner.textContent(), { timeout: 60_000 })
      .toBe(`Halted: panic file ${panicFile()} is present: stopping at once. Nothing published is lost; resume when it is safe.`);
    expect(await page.getByRole('button', { name: 'Resume' }).isVisible()).toBe(true);
    await shot(page, '06-stop-condition');
    expect(await page.getByTestId('canary').isVisible()).toBe(true); // the canary's comparison stays on the step
  });

  it('7. resumed, then the engine is killed mid-run and restarted: resume finishes without redoing or doubling', async () => {
    rmSync(panicFile());
    const before = await published();
    await page.getByRole('button', { name: 'Resume' }).click();
    await expect.poll(published, { timeout: 60_000 }).toBeGreaterThanOrEqual(before + 2);
    await shot(page, '07-running');
    expect(await published()).toBeLessThan(10);
    await engine.kill();

    engine = await startEngine({ workspace: ws.dir, db: ws.db, env: ws.env });
    await page.context().close();
    ({ page, errors } = await openApp(browser, engine));
    await page.goto(`${engine.origin}/#/runbook/${RUN}/execute`);
    await expect.poll(() => page.getByTestId('stop-reason').textContent()).toMatch(/^Interrupted: no executor is driving this run/);
    await shot(page, '08-interrupted-after-restart');
    await page.getByRole('button', { name: 'Resume' }).click();
    await expect
      .poll(() => page.getByTestId('step-detail').textContent(), { timeout: 90_000 })
      .toBe('Succeeded: 10/10 published, reconciled.');
    await shot(page, '09-succeeded');
    // The target is exactly what one clean run gives: equal to the oracle, one marker per partition.
    expect(await martMd5(db.client, '2026-05-01', '2026-05-11')).toBe(
      await martMd5(db.client, '2026-05-01', '2026-05-11', 'oracle.mart_order_daily'),
    );
    const marks = await db.client.query<{ n: string }>(
      `select count(distinct partition_key)::text as n from backfill_runbook.partition_marks where run_id = $1`,
      [RUN],
    );
    expect(marks.rows[0]?.n).toBe('10');
  });

  it('8. row-count comparison: source vs target per partition, kept as evidence', async () => {
    await step(6, 'Row-count comparison');
    await page.getByRole('button', { name: 'Capture the comparison' }).click();
    await expect
      .poll(() => page.getByTestId('compare-verdict').textContent(), { timeout: 30_000 })
      .toMatch(/^Source and target agree on all 10 partitions\./);
    await shot(page, '10-compare');
  });

  it('9. close: the summary, and the incident note with its head signed', async () => {
    await step(7, 'Close');
    await page.getByLabel(/^Closing comment — goes into the incident note/).fill('May refunds remapped; dashboard owners told.');
    await page.getByLabel("lead's passphrase").fill(PASSPHRASE);
    await page.getByRole('button', { name: 'Close the runbook and sign the note as lead' }).click();
    await expect.poll(() => page.getByTestId('note-preview').textContent()).toMatch(/^# Incident note — backfill bf-e2e-orders/);
    expect(await page.getByTestId('close-summary').textContent()).toContain('Outcomesucceeded: 10/10 partitions published, 0 failed');
    expect(await page.getByTestId('close-signed').textContent()).toBe("The incident note's head is signed by lead.");
    expect(await page.getByTestId('note-preview').textContent()).toContain('> May refunds remapped; dashboard owners told.');
    await shot(page, '11-close');
  });

  it('10. History finds the run and opens it on its summary, then its timeline, evidence and partition grid', async () => {
    await page.getByRole('button', { name: 'History', exact: true }).click();
    await page.getByLabel('Search (request id, job, person, halt reason)').fill('e2e-ord');
    await expect.poll(() => page.getByTestId('history-count').textContent()).toBe('1 run(s)');
    await shot(page, '12-history');
    await page.getByRole('button', { name: RUN }).click();
    await expect.poll(() => page.getByRole('region', { name: 'The story' }).textContent()).toContain('refund reason mapping bug (e2e)');
    expect(await page.getByRole('gridcell', { name: /published$/ }).count()).toBe(10);
    await page.getByRole('tab', { name: /^Timeline/ }).click();
    const timeline = page.getByRole('list', { name: 'Timeline' });
    const events = (await timeline.locator('.timeline-text').allTextContents()).join('\n');
    expect(events.match(/resumed the run/g)?.length ?? 0, events).toBeGreaterThanOrEqual(2);
    expect(events.match(/a stop condition fired/g)?.length ?? 0).toBe(1);
    await shot(page, '13-run-timeline');
    await page.getByRole('tab', { name: /^Evidence/ }).click();
    for (const kind of ['sanity-check', 'snapshot', 'dry-run', 'reconciliation', 'row-count-comparison', 'runbook-closed']) {
      expect(
        await page.getByRole('table', { name: 'Evidence' }).getByRole('cell', { name: kind, exact: true }).count(),
        kind,
      ).toBeGreaterThanOrEqual(1);
    }
    await shot(page, '14-run-evidence');
    expect(errors).toEqual([]);
  });
});
