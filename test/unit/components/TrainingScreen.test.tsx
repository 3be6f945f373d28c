// @vitest-environment happy-dom
/**
 * The Training screen: only in the Sandbox; every scenario with its story, the unavailable ones
 * greyed with their reason; Load only after a confirmation (it resets the Sandbox); the loaded
 * scenario's story, "fixed means", steps and Sandbox lead; "Check my work" with ✓/✗ per check;
 * and the shortcut that pre-fills the plan with the scenario's job and range.
 */
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AppInfo, ScenarioVerdictView, ScenarioView, TrainingView } from '../../../shared/contractTypes.ts';
import { EMPTY_DRAFT } from '../../../renderer/lib/planDraft.ts';
import { trainingRequestId } from '../../../renderer/lib/scenarioPlan.ts';
import { TrainingScreen } from '../../../renderer/screens/TrainingScreen.tsx';
import { useApp } from '../../../renderer/store/index.ts';
import { installFakeBridge, type FakeBridge } from './fakeBridge.tsx';

const refunds: ScenarioView = {
  id: 1,
  slug: 'refund-reasons',
  title: 'Refund reasons mapped wrong',
  story: 'Two months of refunds counted as "other".',
  job: 'refund-reason-daily',
  range: { from: '2026-05-01', to: '2026-07-01' },
  steps: ['run-backfill check refund-reason-daily --from 2026-05-01 --to 2026-07-01'],
  fixed: 'Every refund day equals a recomputation from the source.',
};
const lake: ScenarioView = {
  ...refunds,
  id: 3,
  slug: 's3',
  title: 'Hours missing from S3',
  story: 'Two hours never arrived.',
  steps: [],
  unavailable: 'the sandbox has no S3 server in this build',
};
const LOADED_AT = '2026-11-30T12:34:56.789Z';
const lead = { name: 'sandbox-lead', passphrase: 'sandbox-training-only', fingerprint: 'f'.repeat(64) };

const workspace = (kind: 'sandbox' | 'folder'): AppInfo => ({
  version: 'test',
  workspace: {
    label: kind === 'sandbox' ? 'Sandbox' : 'w',
    kind,
    dir: '/s',
    dbFile: '/s/runbook.sqlite',
    jobsDir: '/s/jobs',
    configFile: null,
  },
  operator: 'ann@host',
  secretStorage: 'unavailable',
  browserMode: true,
});

let bridge: FakeBridge;
let view: TrainingView;
let verdict: ScenarioVerdictView;

beforeEach(() => {
  useApp.setState({ info: workspace('sandbox'), draft: EMPTY_DRAFT, errors: [], view: { name: 'training' } });
  view = { scenarios: [refunds, lake], current: null, lead: null };
  verdict = {
    scenario: refunds,
    ok: false,
    loadedAt: LOADED_AT,
    checks: [
      { name: 'target reconciles with the source', ok: false, detail: 'mart.refund_daily differs from the source' },
      { name: 'nothing duplicated', ok: true, detail: 'no duplicate keys in the target' },
    ],
  };
  bridge = installFakeBridge({
    'training:list': () => view,
    'training:load': () => {
      view = { ...view, current: { id: 1, loadedAt: LOADED_AT }, lead };
      return { scenario: refunds, loadedAt: LOADED_AT, lead };
    },
    'training:check': () => verdict,
  });
});
afterEach(cleanup);

const names = () => bridge.calls.map((c) => c.name);

describe('the Training screen', () => {
  it('outside the Sandbox it offers nothing to load and asks the engine for nothing', () => {
    useApp.setState({ info: workspace('folder') });
    render(<TrainingScreen />);
    expect(screen.getByText(/Training scenarios run in the Sandbox only/)).toBeTruthy();
    expect(screen.queryByRole('button', { name: /^Load scenario/ })).toBeNull();
    expect(names()).toEqual([]);
  });

  it('lists every scenario with its story; an unavailable one is greyed, says why and cannot be loaded', async () => {
    render(<TrainingScreen />);
    const item = await screen.findByRole('listitem', { name: 'Scenario 3: Hours missing from S3' });
    expect(item.className).toBe('scenario unavailable');
    expect(within(item).getByTestId('unavailable').textContent).toBe(
      'Not available in this build: the sandbox has no S3 server in this build',
    );
    expect(within(item).queryByRole('button')).toBeNull();
    const first = screen.getByRole('listitem', { name: 'Scenario 1: Refund reasons mapped wrong' });
    expect(within(first).getByText('Two months of refunds counted as "other".')).toBeTruthy();
    expect(screen.getByText('No scenario loaded')).toBeTruthy();
  });

  it('loads only after the confirmation that it resets the Sandbox; Cancel loads nothing', async () => {
    render(<TrainingScreen />);
    fireEvent.click(await screen.findByRole('button', { name: 'Load scenario 1' }));
    expect(screen.getByRole('dialog', { name: 'Load scenario 1?' }).textContent).toContain('resets the Sandbox');
    fireEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(names()).not.toContain('training:load');

    fireEvent.click(screen.getByRole('button', { name: 'Load scenario 1' }));
    fireEvent.click(screen.getByRole('button', { name: 'Reset the Sandbox and load scenario 1' }));
    const panel = () => screen.getByRole('region', { name: 'Scenario' });
    await waitFor(() =>
      expect(within(panel()).getByRole('heading', { level: 2 }).textContent).toBe('Scenario 1: Refund reasons mapped wrong'),
    );
    expect(bridge.calls.filter((c) => c.name === 'training:load')).toEqual([{ name: 'training:load', input: { id: 1 } }]);
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(within(panel()).getByTestId('fixed-means').textContent).toBe(
      'Fixed means: Every refund day equals a recomputation from the source.',
    );
    expect(within(panel()).getByTestId('lead-passphrase').textContent).toBe('sandbox-training-only');
    expect(within(panel()).getByText('run-backfill check refund-reason-daily --from 2026-05-01 --to 2026-07-01')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Load scenario 1 again' })).toBeTruthy();
  });

  it.each<[string, boolean, string, string[]]>([
    [
      'not fixed: what was missed, ✗ and ✓',
      false,
      'Not fixed yet — 1 of 2 checks fail. What you missed:',
      [
        '✗ target reconciles with the source: mart.refund_daily differs from the source',
        '✓ nothing duplicated: no duplicate keys in the target',
      ],
    ],
    [
      'fixed',
      true,
      'FIXED — every check holds.',
      ['✓ target reconciles with the source: 303 rows match', '✓ nothing duplicated: no duplicate keys in the target'],
    ],
  ])('"Check my work" shows each check: %s', async (_what, ok, banner, lines) => {
    view = { ...view, current: { id: 1, loadedAt: LOADED_AT }, lead };
    if (ok) verdict = { ...verdict, ok, checks: [{ ...verdict.checks[0]!, ok: true, detail: '303 rows match' }, verdict.checks[1]!] };
    render(<TrainingScreen />);
    fireEvent.click(await screen.findByRole('button', { name: 'Check my work' }));
    expect((await screen.findByTestId('verdict-banner')).textContent).toBe(banner);
    expect(
      within(screen.getByRole('list', { name: 'Checks' }))
        .getAllByRole('listitem')
        .map((li) => li.textContent),
    ).toEqual(lines);
    expect(bridge.calls.filter((c) => c.name === 'training:check')).toEqual([{ name: 'training:check', input: { id: 1 } }]);
  });

  it('"Start this scenario\'s plan" fills the plan with its job and range, and opens the plan', async () => {
    view = { ...view, current: { id: 1, loadedAt: LOADED_AT }, lead };
    render(<TrainingScreen />);
    fireEvent.click(await screen.findByRole('button', { name: "Start this scenario's plan" }));
    const { draft, view: at } = useApp.getState();
    expect(at).toEqual({ name: 'plan' });
    expect([draft.job, draft.from, draft.to, draft.requestId, draft.reason]).toEqual([
      'refund-reason-daily',
      '2026-05-01',
      '2026-07-01',
      'train-1-20261130-123456',
      'Training scenario 1: Refund reasons mapped wrong',
    ]);
  });
});

it.each([
  [1, '2026-11-30T12:34:56.789Z', 'train-1-20261130-123456'],
  [6, '2026-01-02T03:04:05.000Z', 'train-6-20260102-030405'],
])('scenario %i loaded at %s plans as request %s', (id, at, expected) => {
  expect(trainingRequestId(id, at)).toBe(expected);
});
