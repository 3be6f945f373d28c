/**
 * What a lead signs and what an incident ticket gets, in Chromium on the real engine and
 * PostgreSQL, on sandbox scenario 1's data (refund reasons mapped wrong: every total stays,
 * "damaged" refunds sit under "other"):
 *   - Impact leads with the change by key: 'damaged' added, 'other' changed, sums net 0 but moved;
 *   - the sign-off screen restates what is approved;
 *   - Close asks who signs the note's head; the note (HTML → PDF) tells the story;
 *   - History opens on the summary, a partition cell opens its evidence, evidence reads as tables;
 *   - the run's JSON bundle verifies INTACT after export, and stays the same size after 49 more
 *     runs land in the same ledger (it carries only its own audit segment).
 * Screenshots, the PDF and its pages go to test-results/e2e/ (change-*.png, change-note.pdf).
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SANDBOX_JOBS } from '../../electron/engine/sandbox/jobs.ts';
import { scenario } from '../../electron/engine/sandbox/scenarios.ts';
import { seedWarehouse } from '../../electron/engine/sandbox/seed.ts';
import { openStore } from '../../electron/engine/store/index.ts';
import { createTestDatabase, type TestDatabase } from '../support/pg.ts';
import { makeWorkspace, pgConfig, runCli, type Workspace } from '../support/workspace.ts';
import { chromiumOrSkip, closeWorkspaceApp, openStep, openWorkspaceApp, shot, SHOTS, type Engine } from './support.ts';

const browserPath = chromiumOrSkip();
const RUN = 'bf-refund-reasons-e2e';
const PASSPHRASE = 'correct horse battery staple';
const COMMENT = 'Damaged refunds were filed under "other" for May and June.\nFinance re-ran the settlement report; nothing else to do.';

describe.skipIf(browserPath.path === null)('the change by key, the sign-off, the incident note and History (scenario 1)', () => {
  let db: TestDatabase;
  let ws: Workspace;
  let browser: Browser;
  let engine: Engine;
  let page: Page;
  let errors: string[];
  let damaged: { refunds: number; amount: string };
  let keys: { added: number; removed: number; changed: number };
  const counts = () => `${keys.added} added, ${keys.removed} removed, ${keys.changed} changed`;

  beforeAll(async () => {
    db = await createTestDatabase(inject('pgA'), 'e2e_change');
    await seedWarehouse(db.client);
    await scenario(1).inject({ client: db.client, lake: null });
    const r = await db.client.query<{ refunds: string; amount: string }>(
      `select count(*)::text as refunds, sum(refund_amount)::text as amount from refunds
        where reason_code = 'DMG' and refunded_at >= '2026-05-01' and refunded_at < '2026-07-01'`,
    );
    damaged = { refunds: Number(r.rows[0]?.refunds), amount: r.rows[0]?.amount ?? '' };
    // The oracle of keys, by day: "damaged" is added where the day had damaged refunds; "other"
    // changes where it also had real "other" refunds, and is removed where it had none.
    const days = await db.client.query<{ added: string; removed: string; changed: string }>(
      `with d as (select cast(refunded_at as date) as day, bool_or(reason_code = 'DMG') as dmg, bool_or(reason_code = 'OTHER') as oth
                    from refunds where refunded_at >= '2026-05-01' and refunded_at < '2026-07-01' group by 1)
       select count(*) filter (where dmg)::text as added, count(*) filter (where dmg and not oth)::text as removed,
              count(*) filter (where dmg and oth)::text as changed from d`,
    );
    keys = { added: Number(days.rows[0]?.added), removed: Number(days.rows[0]?.removed), changed: Number(days.rows[0]?.changed) };
    ws = makeWorkspace('e2e-change', { WAREHOUSE_PASSWORD: db.password, BACKFILL_TEST_PASSPHRASE: PASSPHRASE });
    ws.writeConfig(pgConfig({ warehouse: { url: db.url, passwordEnv: 'WAREHOUSE_PASSWORD' } }));
    ws.writeJob('refund-reason-daily', SANDBOX_JOBS['refund-reason-daily'] as string);
    ({ browser, engine, page, errors } = await openWorkspaceApp(browserPath.path as string, ws));
  });

  afterAll(() => closeWorkspaceApp({ browser, engine }, [db], ws?.dir));

  it('a lead and an operator identity are made on the Workspace screen', async () => {
    await page.goto(`${engine.origin}/#/workspace`);
    for (const [name, role] of [
      ['lead', 'lead'],
      ['carol', 'operator'],
    ] as const) {
      await page.getByLabel('Identity name').fill(name);
      await page.getByLabel('Role').selectOption(role);
      await page.getByLabel('Passphrase (8+ characters)').fill(PASSPHRASE);
      await page.getByRole('button', { name: 'Create the identity' }).click();
      await expect.poll(() => page.locator('li', { hasText: `${name} ${role}` }).count()).toBe(1);
    }
  });

  it('a plan with nobody in "Requested by" is requested by the operator, and stop fields say they are off', async () => {
    await page.getByRole('button', { name: 'New plan' }).click();
    await page.getByLabel('Job').selectOption('refund-reason-daily');
    await page.getByLabel('Request id (the run id)').fill(RUN);
    await page.getByLabel('Reason').fill('refund reasons mapped wrong for two months');
    await page.getByLabel('From (inclusive)').fill('2026-05-01');
    await page.getByLabel('To (exclusive)').fill('2026-07-01');
    await page.getByLabel('Pause between partitions (ms)').fill('0');
    expect(await page.getByLabel('Max lock wait (ms)').getAttribute('placeholder')).toBe('no limit');
    expect(await page.getByLabel('Requested by').inputValue()).toBe('');
    await page.getByRole('button', { name: 'Create the runbook' }).click();
    await expect.poll(() => page.url()).toContain(`#/runbook/${RUN}`);
    await expect.poll(() => page.locator('.run-header').textContent()).toMatch(/requested by (?!–)\S+/);
  });

  it('Impact leads with the change by key: totals stay, "damaged" is added and "other" gives it up', async () => {
    await page.getByRole('button', { name: 'Run the sanity checks' }).click();
    await expect.poll(() => page.getByRole('table', { name: 'Sanity check results' }).locator('tbody tr').count()).toBeGreaterThan(0);
    await openStep(page, 2, 'Snapshot backup');
    await page.getByRole('button', { name: 'Take the snapshot' }).click();
    await expect.poll(() => page.getByTestId('snapshot-location').textContent()).toMatch(/backfill_runbook_snapshots/);
    await openStep(page, 3, 'Impact scope');
    await page.getByRole('button', { name: 'Run the dry run' }).click();
    const headline = page.getByTestId('change-headline');
    await expect.poll(() => headline.textContent(), { timeout: 60_000 }).toMatch(/keys change/);
    expect(keys.added).toBeGreaterThan(50); // scenario 1: damaged refunds nearly every day
    expect(await headline.textContent()).toContain(`the run would make: ${counts()} by (refund_date, reason)`);
    // Every total stays: refunds and amounts only move between reasons.
    const sums = await page.getByTestId('change-sums').locator('tbody tr').allTextContents();
    expect(sums).toEqual([
      expect.stringMatching(/^refunds[\d,]+[\d,]+0[\d,]+$/),
      expect.stringMatching(/^refund_amount[\d,.]+[\d,.]+0[\d,.]+$/),
    ]);
    const movers = page.getByTestId('change-movers');
    expect(await movers.locator('tr', { hasText: 'damaged' }).textContent()).toBe(
      `damaged${keys.added}+${damaged.refunds.toLocaleString('en-US')}+${Number(damaged.amount).toLocaleString('en-US', { maximumFractionDigits: 2 })}`,
    );
    expect(await movers.locator('tr', { hasText: 'other' }).textContent()).toBe(
      `other${keys.removed + keys.changed}-${damaged.refunds.toLocaleString('en-US')}-${Number(damaged.amount).toLocaleString('en-US', { maximumFractionDigits: 2 })}`,
    );
    const sample = await page.getByTestId('change-sample').locator('tbody tr').allTextContents();
    expect(sample.some((row) => /added.*, damaged– → \d+– → [\d.]+$/.test(row))).toBe(true);
    expect(sample.some((row) => /changed.*, other\d+ → \d+[\d.]+ → [\d.]+$/.test(row))).toBe(true);
    // The charts draw (ECharts on a canvas): keys per partition, rows, a measure.
    expect(await page.getByTestId('change-charts').locator('canvas').count()).toBeGreaterThanOrEqual(3);
    await shot(page, 'change-01-impact');
  });

  it('the sign-off screen restates what the lead approves, and the lead signs', async () => {
    await openStep(page, 4, 'Lead sign-off');
    const approval = page.getByTestId('approval');
    await expect.poll(() => approval.isVisible()).toBe(true);
    expect(await page.getByTestId('approval-range').textContent()).toMatch(
      /^61 daily partitions, 2026-05-01 to 2026-06-30 inclusive \(2026-05-01 to 2026-07-01, half-open\)/,
    );
    expect(await page.getByTestId('approval-downstream').textContent()).toBe('finance.settlement_monthly');
    expect(await page.getByTestId('approval-snapshot').textContent()).toMatch(
      /^snapshot #\d+: 61 partitions at "backfill_runbook_snapshots"/,
    );
    expect(await approval.getByTestId('change-headline').textContent()).toContain(`predicted by the dry run: ${counts()}`);
    await page.getByLabel("Lead's passphrase").fill(PASSPHRASE);
    await page.getByLabel('Comment').fill('damaged up, other down, totals equal: as expected');
    await page.getByRole('button', { name: 'Sign off this plan' }).click();
    await expect.poll(() => page.getByTestId('signoff-valid').textContent()).toMatch(/^counts lead/);
    await shot(page, 'change-02-signoff');
  });

  it('executes, and the comparison measures against the snapshot exactly what was predicted', async () => {
    await openStep(page, 5, 'Execute');
    await page.getByRole('button', { name: 'Start executing' }).click();
    // Manual tier: the canary day runs first, compared with its snapshot by key; then the rest.
    await expect.poll(() => page.getByTestId('canary').textContent(), { timeout: 120_000 }).toContain('2026-05-01snapshot');
    await page.getByRole('button', { name: 'Continue the run' }).click();
    await expect
      .poll(() => page.getByTestId('step-detail').textContent(), { timeout: 120_000 })
      .toBe('Succeeded: 61/61 published, reconciled.');
    await openStep(page, 6, 'Row-count comparison');
    await page.getByRole('button', { name: 'Capture the comparison' }).click();
    const counts = page.getByTestId('change-counts').locator('tbody tr');
    await expect.poll(() => counts.count(), { timeout: 60_000 }).toBe(2);
    const [predicted, actual] = await counts.allTextContents();
    expect(predicted?.replace(/^predicted/, '')).toBe(actual?.replace(/^the run made \(each partition against its snapshot\)/, ''));
    await shot(page, 'change-03-compare');
  });

  it('Close asks who signs the note, and the note tells the story with the closing comment and charts (HTML → PDF)', async () => {
    await openStep(page, 7, 'Close');
    await page.getByLabel(/^Closing comment/).fill(COMMENT);
    await page.getByLabel("Sign the note's head as").selectOption('carol');
    await page.getByLabel("carol's passphrase").fill(PASSPHRASE);
    await shot(page, 'change-04-close-form');
    await page.getByRole('button', { name: 'Close the runbook and sign the note as carol' }).click();
    await expect.poll(() => page.getByTestId('close-signed').textContent()).toBe("The incident note's head is signed by carol.");
    const md = (await page.getByTestId('note-preview').textContent()) ?? '';
    expect(md).toContain(`> ${COMMENT.split('\n')[0]}\n> ${COMMENT.split('\n')[1]}`);
    expect(md).toContain('## Downstream to notify');
    expect(md).toContain('finance.settlement_monthly');
    expect(md).toMatch(/\*\*Signed off by:\*\* lead \(lead\) at /);
    await shot(page, 'change-05-close');
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download as HTML (print to PDF)' }).click();
    const html = join(SHOTS, 'change-note.html');
    await (await download).saveAs(html);
    const note = await browser.newPage({ viewport: { width: 794, height: 1123 } });
    await note.goto(`file://${html}`);
    await note.emulateMedia({ media: 'print' });
    expect(await note.locator('blockquote.comment .words').last().textContent()).toBe(COMMENT);
    expect(await note.locator('section:has(h2:text("What changed")) figure.chart svg').count()).toBe(3);
    // Partitions: 61 uniform ones are one summary row, not 61 identical rows.
    expect(await note.locator('section:has(h2:text("Partitions")) tbody tr').allTextContents()).toEqual([
      expect.stringMatching(/^61 partitions, 2026-05-01 … 2026-06-30published1/),
    ]);
    const pdf = await note.pdf({ format: 'A4', printBackground: true, outline: true });
    writeFileSync(join(SHOTS, 'change-note.pdf'), pdf);
    expect(pdf.toString('latin1').match(/\/Type \/Page\b/g)?.length ?? 0).toBeGreaterThanOrEqual(2);
    await note.close();
  });

  it('History opens the run on its summary; a partition cell opens its evidence; evidence reads as tables', async () => {
    await page.getByRole('button', { name: 'History', exact: true }).click();
    await page.getByRole('button', { name: RUN }).click();
    const story = page.getByRole('region', { name: 'The story' });
    await expect.poll(() => story.textContent()).toContain('refund reasons mapped wrong for two months');
    expect(await story.textContent()).toMatch(/lead \(lead\) signed off/);
    expect(await page.getByRole('region', { name: 'Comments' }).locator('.words').last().textContent()).toBe(COMMENT);
    expect(await page.getByTestId('change-charts').locator('canvas').count()).toBeGreaterThanOrEqual(3);
    await shot(page, 'change-06-history-summary');
    await page.getByRole('gridcell', { name: '2026-05-03 published' }).click();
    const evidence = page.getByTestId('partition-evidence');
    await expect.poll(() => evidence.locator('h3').textContent()).toBe('Partition 2026-05-03');
    expect(await evidence.locator('tr', { hasText: 'Checksum' }).textContent()).toMatch(/^Checksum(h64|md5):[0-9a-f-]+/);
    const row = async (name: string) => ((await evidence.locator('tr', { hasText: name }).textContent()) ?? '').slice(name.length);
    expect(await row('Keys, after the run')).toMatch(/^1 added, [01] removed, [01] changed, \d+ unchanged$/);
    expect(await row('Keys, after the run')).toBe(await row('Keys, predicted'));
    await evidence.scrollIntoViewIfNeeded();
    await shot(page, 'change-07-history-partition');
    await page.getByRole('tab', { name: /^Evidence/ }).click();
    await page
      .getByRole('row', { name: /dry-run/ })
      .getByRole('button', { name: 'Open' })
      .click();
    const modal = page.locator('.modal');
    await expect.poll(() => modal.locator('table.json-table').count()).toBeGreaterThan(1);
    expect(await modal.locator('details.raw-json').getAttribute('open')).toBeNull();
    await shot(page, 'change-08-evidence-tables');
    expect(errors).toEqual([]);
  });

  it('the JSON bundle verifies INTACT after export, and stays its size after 49 more runs land in the ledger', async () => {
    const exported = async (file: string) => {
      const r = await runCli(ws, [
        'export',
        '--run-id',
        RUN,
        '--format',
        'json',
        '--out',
        file,
        '--identity',
        'carol',
        '--passphrase-env',
        'BACKFILL_TEST_PASSPHRASE',
      ]);
      expect(r.code, r.stderr).toBe(0);
      const verified = await runCli(ws, ['verify', file]);
      expect(verified.code, verified.stdout + verified.stderr).toBe(0);
      expect(verified.stdout).toMatch(/^INTACT: /);
      return statSync(file).size;
    };
    const one = await exported(join(ws.dir, 'one.json'));
    // 49 more runs of another job, each with its plan, evidence and 20 partitions published.
    const store = openStore(ws.db);
    try {
      for (let i = 1; i <= 49; i++) {
        const runId = `other-${i}`;
        const planHash = `${String(i).padStart(2, '0')}${'e'.repeat(62)}`;
        store.plans.save({ planHash, requestId: runId, jobName: 'other', plan: { request_id: runId } });
        store.evidence.add({ planHash, kind: 'dry-run', body: { partitions: [] } });
        const keys = Array.from({ length: 20 }, (_, d) => `2026-0${1 + (d % 9)}-1${d % 10}`);
        store.runs.create({
          runId,
          jobName: 'other',
          planHash,
          jobHash: planHash,
          kind: 'execute',
          tier: 'semi-auto',
          actor: 'dave',
          partitions: [...new Set(keys)].map((key) => ({ key })),
        });
        store.runs.setStatus(runId, 'running', { actor: 'dave', event: 'run.started' });
        for (const key of new Set(keys)) {
          store.partitions.transition(runId, key, 'running', {}, 'dave');
          store.partitions.transition(runId, key, 'published', { rowsWritten: 5, checksum: 'md5:x' }, 'dave');
        }
        store.runs.setStatus(runId, 'succeeded', { actor: 'dave' });
      }
      expect(store.runs.list({ limit: 100 }).length).toBe(50);
    } finally {
      store.close();
    }
    const fifty = await exported(join(ws.dir, 'fifty.json'));
    console.log(`bundle of ${RUN}: ${one} bytes in a ledger of 1 run, ${fifty} bytes in a ledger of 50 runs`);
    expect(Math.abs(fifty - one) / one).toBeLessThan(0.05);
    const text = readFileSync(join(ws.dir, 'fifty.json'), 'utf8');
    writeFileSync(join(SHOTS, 'change-bundle.json'), text);
    const bundle = JSON.parse(text) as { audit: { runId: string | null }[] };
    expect(bundle.audit.some((e) => e.runId?.startsWith('other-'))).toBe(false);
  });
});
