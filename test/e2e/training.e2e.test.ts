/**
 * Training scenario 1 through the UI, from nothing: the app starts on a fresh Sandbox (as
 * `npm start` does with no configuration), lands on Training, loads scenario 1 (after a
 * confirmation), and the trainee repairs it with the normal plan → runbook flow — sanity,
 * snapshot, dry run, a sign-off by the Sandbox's own lead, execute, row-count comparison,
 * close. "Check my work" says what is missing before execution and FIXED after; the engine's
 * own check on the same ledger and warehouse agrees, so no UI illusion can pass. Nothing is
 * left running afterwards. Screenshots: test-results/e2e/training-*.png.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../electron/engine/plan/load.ts';
import { postgresDataDir, removeSandbox } from '../../electron/engine/sandbox/index.ts';
import { SANDBOX_LEAD } from '../../electron/engine/sandbox/sandboxLead.ts';
import { checkTrainingScenario } from '../../electron/engine/sandbox/training.ts';
import { openStore } from '../../electron/engine/store/index.ts';
import { chromiumOrSkip, launch, openApp, openStep, RENDERER, shot, startEngine, type Engine } from './support.ts';

const browserPath = chromiumOrSkip();
const SCENARIO_1 = 'Scenario 1: Refund reasons mapped wrong for two months';

/** Processes started for this Sandbox (its PostgreSQL, its S3 server), by their data folders. */
function sandboxProcesses(dir: string): string[] {
  try {
    return execFileSync('pgrep', ['-af', '.'], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.includes(postgresDataDir(dir)) || line.includes(dir));
  } catch {
    return [];
  }
}

describe.skipIf(browserPath.path === null)('training scenario 1, end to end in Chromium on a fresh Sandbox', () => {
  const home = mkdtempSync(join(tmpdir(), 'bfr-training-'));
  const dir = join(home, 'sandbox');
  let browser: Browser;
  let engine: Engine;
  let page: Page;
  let errors: string[];
  let runId = '';
  const started = Date.now();

  beforeAll(async () => {
    if (!existsSync(join(RENDERER, 'index.html')))
      throw new Error(`${RENDERER} is not built: run \`npm run build:renderer\` (npm test does)`);
    browser = await launch(browserPath.path as string);
    engine = await startEngine({ sandbox: dir, db: join(home, 'app.sqlite') });
    ({ page, errors } = await openApp(browser, engine));
  });

  afterAll(async () => {
    await browser?.close();
    await engine?.stop();
    const left = sandboxProcesses(dir);
    removeSandbox(dir);
    console.info(`training e2e: ${((Date.now() - started) / 1000).toFixed(1)} s from an empty folder to FIXED and shut down`);
    expect(left, 'processes left behind by the Sandbox').toEqual([]);
  });

  const checkMyWork = async () => {
    await page.getByRole('button', { name: 'Training', exact: true }).click();
    await page.getByRole('button', { name: 'Check my work' }).click();
    await expect.poll(() => page.getByTestId('verdict-banner').isVisible(), { timeout: 30_000 }).toBe(true);
    return page.getByRole('list', { name: 'Checks' }).getByRole('listitem').allTextContents();
  };

  it('opens on Training in a fresh Sandbox: each scenario with its story, or why it is not available', async () => {
    await page.goto(engine.origin);
    await expect.poll(() => page.url(), { timeout: 30_000 }).toContain('#/training');
    expect(await page.getByRole('status').textContent()).toBe('Sandbox — training data, nothing real is changed');
    const items = page.getByRole('region', { name: 'Training scenarios' }).getByRole('listitem');
    await expect.poll(() => items.count()).toBeGreaterThanOrEqual(6);
    for (const item of await items.all()) {
      const text = (await item.textContent()) ?? '';
      const load = await item.getByRole('button', { name: /^Load scenario \d+$/ }).count();
      // every scenario can be loaded, or says plainly why not (and is greyed out)
      expect(load === 1 || /Not available in this build: \S/.test(text), text).toBe(true);
      if (load === 0) expect(await item.getAttribute('class')).toContain('unavailable');
    }
    expect(await page.getByText('No scenario loaded').isVisible()).toBe(true);
    await shot(page, 'training-01-scenarios');
  });

  it('loading scenario 1 asks first (it resets the Sandbox), then shows the story, what fixed means, the steps and the Sandbox lead', async () => {
    await page.getByRole('button', { name: 'Load scenario 1' }).click();
    const dialog = page.getByRole('dialog', { name: 'Load scenario 1?' });
    expect(await dialog.textContent()).toContain('resets the Sandbox');
    await shot(page, 'training-02-confirm');
    await dialog.getByRole('button', { name: 'Reset the Sandbox and load scenario 1' }).click();
    const panel = page.getByRole('region', { name: 'Scenario' });
    await expect.poll(() => panel.getByRole('heading', { level: 2 }).textContent(), { timeout: 60_000 }).toBe(SCENARIO_1);
    expect(await page.getByRole('dialog').count()).toBe(0);
    expect(await panel.getByTestId('fixed-means').textContent()).toMatch(
      /^Fixed means: Every refund day from 2026-05-01 to 2026-06-30 equals a recomputation from the source/,
    );
    expect(await panel.locator('.scenario-steps li').count()).toBeGreaterThanOrEqual(4);
    expect(await panel.getByTestId('lead-passphrase').textContent()).toBe(SANDBOX_LEAD.passphrase);
    expect(await panel.getByTestId('sandbox-lead').textContent()).toContain('Sandbox only');
    await shot(page, 'training-03-loaded');
  });

  it('freshly loaded, "Check my work" says what is missing', async () => {
    const checks = await checkMyWork();
    expect(await page.getByTestId('verdict-banner').textContent()).toMatch(/^Not fixed yet — \d+ of \d+ checks fail\. What you missed:$/);
    expect(checks.find((c) => c.includes('target reconciles with the source'))).toMatch(
      /^✗ target reconciles with the source: mart\.refund_daily differs from the source/,
    );
    expect(checks.find((c) => c.includes('succeeded over the whole range'))).toMatch(
      /^✗ .*: no refund-reason-daily run covers 2026-05-01 → 2026-07-01 yet$/,
    );
    expect(checks).toContain("✗ evidence: lead sign-off: no lead sign-off on record for this run's plan");
    await shot(page, 'training-04-not-fixed');
  });

  it("1. plan: the scenario's shortcut fills in its job and range; the tier is manual", async () => {
    await page.getByRole('button', { name: "Start this scenario's plan" }).click();
    await expect.poll(() => page.getByTestId('range-words').textContent()).toBe('61 daily partitions, 2026-05-01 to 2026-06-30 inclusive');
    expect(await page.getByLabel('Job').inputValue()).toBe('refund-reason-daily');
    runId = await page.getByLabel('Request id (the run id)').inputValue();
    expect(runId).toMatch(/^train-1-\d{8}-\d{6}$/);
    expect(await page.getByTestId('tier').textContent()).toMatch(/^manualbilling data/);
    await page.getByLabel('Requested by').fill('finance');
    await shot(page, 'training-05-plan');
    await page.getByRole('button', { name: 'Create the runbook' }).click();
    await expect.poll(() => page.url()).toContain(`#/runbook/${runId}`);
  });

  it('2–4. sanity, snapshot and dry run', async () => {
    await page.getByRole('button', { name: 'Run the sanity checks' }).click();
    const sanity = page.getByRole('table', { name: 'Sanity check results' });
    await expect.poll(() => sanity.locator('tbody tr').count(), { timeout: 30_000 }).toBe(3);
    expect(await sanity.locator('tbody tr').first().textContent()).toContain('null_rate(refunds.reason_code)0≤ 0failholds');
    await openStep(page, 2, 'Snapshot backup');
    await page.getByRole('button', { name: 'Take the snapshot' }).click();
    await expect.poll(() => page.getByTestId('snapshot-location').textContent(), { timeout: 60_000 }).toMatch(/backfill_runbook_snapshots/);
    await openStep(page, 3, 'Impact scope');
    await page.getByRole('button', { name: 'Run the dry run' }).click();
    await expect
      .poll(() => page.getByTestId('impact-totals').textContent(), { timeout: 60_000 })
      .toMatch(/after the run, over 61 partitions/);
    // Every total stays; what the fix changes shows by key: "damaged" comes in, "other" gives it up.
    expect(await page.getByTestId('change-movers').locator('tr', { hasText: 'damaged' }).textContent()).toMatch(/^damaged\d+\+/);
    await shot(page, 'training-06-impact');
  });

  it('5. sign-off by the Sandbox lead: the step names it and its training passphrase', async () => {
    await openStep(page, 4, 'Lead sign-off');
    const hint = page.getByTestId('sandbox-lead-hint');
    await expect
      .poll(() => hint.textContent())
      .toContain(`sign as ${SANDBOX_LEAD.name} with the training passphrase ${SANDBOX_LEAD.passphrase}`);
    expect(await page.getByLabel('Lead', { exact: true }).inputValue()).toBe(SANDBOX_LEAD.name);
    await page.getByLabel("Lead's passphrase").fill((await hint.locator('code').textContent()) ?? '');
    await page.getByLabel('Comment').fill('dry run checked: only the damaged/other split changes');
    await page.getByRole('button', { name: 'Sign off this plan' }).click();
    await expect
      .poll(() => page.getByTestId('signoff-valid').textContent())
      .toMatch(/^counts sandbox-lead, .*: “dry run checked: only the damaged\/other split changes”$/);
    await shot(page, 'training-07-signoff');
  });

  it('before execution, "Check my work" shows the checklist so far ✓ and what only the run gives ✗', async () => {
    const checks = await checkMyWork();
    expect(await page.getByTestId('verdict-banner').textContent()).toMatch(/^Not fixed yet/);
    const failing = checks.filter((c) => c.startsWith('✗ '));
    expect(failing.some((c) => c.startsWith('✗ target reconciles with the source: mart.refund_daily differs'))).toBe(true);
    expect(
      failing.some((c) =>
        /^✗ .*succeeded over the whole range: run \S+ covers the range but is \w+ \(0 partition\(s\) published\)$/.test(c),
      ),
    ).toBe(true);
    expect(checks).toContain('✓ nothing duplicated: no duplicate keys in the target');
    // what the trainee has done on this plan so far counts
    expect(checks).toContain('✓ evidence: source sanity check: source sanity check on record');
    expect(checks).toContain('✓ evidence: dry run (impact scope): dry run (impact scope) on record');
    expect(checks).toContain("✓ evidence: lead sign-off: a lead signed this run's plan before execution");
    expect(checks).toContain(
      "✗ evidence: row-count comparison: no row-count comparison on record for this run's plan — the checklist skipped a step",
    );
    await shot(page, 'training-08-before-execute');
  });

  it('6–7. execute, then the row-count comparison', async () => {
    await page.goto(`${engine.origin}/#/runbook/${runId}/execute`);
    await page.getByRole('button', { name: 'Start executing' }).click();
    // Manual tier: the canary day runs first and is compared with the snapshot; the trainee continues.
    await expect.poll(() => page.getByTestId('canary').textContent(), { timeout: 120_000 }).toContain('2026-05-01snapshot');
    await page.getByRole('button', { name: 'Continue the run' }).click();
    await expect
      .poll(() => page.getByTestId('step-detail').textContent(), { timeout: 120_000 })
      .toBe('Succeeded: 61/61 published, reconciled.');
    await shot(page, 'training-09-executed');
    await openStep(page, 6, 'Row-count comparison');
    await page.getByRole('button', { name: 'Capture the comparison' }).click();
    await expect
      .poll(() => page.getByTestId('compare-verdict').textContent(), { timeout: 60_000 })
      .toMatch(/^Source and target agree on all 61 partitions\./);
  });

  it('8. close: the incident note', async () => {
    await openStep(page, 7, 'Close');
    await page.getByLabel(/^Closing comment/).fill('Training: May–June refunds remapped.');
    await page.getByLabel("Sign the note's head as").selectOption(SANDBOX_LEAD.name);
    await page.getByLabel(`${SANDBOX_LEAD.name}'s passphrase`).fill(SANDBOX_LEAD.passphrase);
    await page.getByRole('button', { name: `Close the runbook and sign the note as ${SANDBOX_LEAD.name}` }).click();
    await expect
      .poll(() => page.getByTestId('note-preview').textContent())
      .toMatch(new RegExp(`^# Incident note — backfill ${runId} — SANDBOX TRAINING RUN, not production\n`));
    await shot(page, 'training-10-closed');
  });

  it('"Check my work" says FIXED, every check ✓ — and the engine agrees on the same ledger and warehouse', async () => {
    const checks = await checkMyWork();
    expect(await page.getByTestId('verdict-banner').textContent()).toBe('FIXED — every check holds.');
    expect(checks.length).toBeGreaterThanOrEqual(7);
    expect(checks.filter((c) => !c.startsWith('✓ '))).toEqual([]);
    await shot(page, 'training-11-fixed');

    const store = openStore(join(dir, 'runbook.sqlite'));
    try {
      const verdict = await checkTrainingScenario({ config: loadConfig(join(dir, 'backfill.config.yaml')), store, id: 1 });
      expect(verdict.checks.filter((c) => !c.ok)).toEqual([]);
      expect(verdict.ok).toBe(true);
      expect(verdict.checks.map((c) => `${c.ok ? '✓' : '✗'} ${c.name}: ${c.detail}`)).toEqual(checks);
      expect(verdict.checks.find((c) => c.name.includes('succeeded over the whole range'))?.detail).toBe(
        `run ${runId} published 61 partitions and reconciled`,
      );
    } finally {
      store.close();
    }
    expect(errors).toEqual([]);
  });
});
