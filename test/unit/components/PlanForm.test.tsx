// @vitest-environment happy-dom
/**
 * The plan form shows, as you type, the partitions the plan covers, its automation tier and
 * its red flags — computed with the engine's own rules.
 */
import { act, cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jobSchema, type JobInput } from '../../../shared/schemas.ts';
import { PlanScreen } from '../../../renderer/screens/PlanScreen.tsx';
import { useApp } from '../../../renderer/store/index.ts';
import { EMPTY_DRAFT } from '../../../renderer/lib/planDraft.ts';
import { installFakeBridge, type FakeBridge } from './fakeBridge.tsx';

const base: JobInput = {
  name: 'order-daily-mart',
  unit: 'day',
  timezone: 'UTC',
  classification: { billing: true, external_partner: false, downstream: ['dashboard.revenue_weekly'] },
  source: { connection: 'warehouse', query: 'select 1' },
  target: { connection: 'warehouse', table: 'mart.mart_order_daily', partition_column: 'order_date', key: ['order_date', 'customer_id'] },
  write_mode: 'overwrite-partition',
  validation: [{ name: 'rows', source: 'select 1', target: 'select 1' }],
};

const jobs = {
  'order-daily-mart': jobSchema.parse(base),
  'events-daily': jobSchema.parse({ ...base, name: 'events-daily', classification: { billing: false, downstream: ['dash.events'] } }),
  'plain-daily': jobSchema.parse({ ...base, name: 'plain-daily', classification: { billing: false }, validation: [] }),
};

let bridge: FakeBridge;

beforeEach(() => {
  useApp.setState({ draft: EMPTY_DRAFT, errors: [] });
  bridge = installFakeBridge({
    'jobs:list': () => ({
      jobs: Object.values(jobs).map((j) => ({ name: j.name, unit: j.unit, target: 'mart.x on warehouse' })),
      problems: [],
    }),
    'jobs:get': (input) => {
      const job = jobs[(input as { name: keyof typeof jobs }).name];
      return { summary: { name: job.name }, job };
    },
    'plans:create': () => ({ runId: 'bf-1', planHash: 'a'.repeat(64) }),
  });
});
afterEach(cleanup);

async function fill(values: { job: string; from: string; to: string; sleep?: string; requestId?: string; rowDiff?: string }) {
  render(<PlanScreen />);
  await waitFor(() => expect(screen.getByRole('option', { name: /events-daily/ })).toBeTruthy());
  fireEvent.change(screen.getByLabelText('Job'), { target: { value: values.job } });
  await waitFor(() => expect(bridge.calls.some((c) => c.name === 'jobs:get')).toBe(true));
  fireEvent.change(screen.getByLabelText('Request id (the run id)'), { target: { value: values.requestId ?? 'bf-2026-06-x' } });
  fireEvent.change(screen.getByLabelText('From (inclusive)'), { target: { value: values.from } });
  fireEvent.change(screen.getByLabelText('To (exclusive)'), { target: { value: values.to } });
  if (values.sleep !== undefined)
    fireEvent.change(screen.getByLabelText('Pause between partitions (ms)'), { target: { value: values.sleep } });
  if (values.rowDiff !== undefined)
    fireEvent.change(screen.getByLabelText('Max row difference vs dry run (ratio)'), { target: { value: values.rowDiff } });
  await act(async () => {
    await new Promise((r) => setTimeout(r, 0));
  });
}

const flagCodes = () => [...(screen.queryByTestId('red-flags')?.querySelectorAll('li code') ?? [])].map((c) => c.textContent);
const tierText = () => screen.getByTestId('tier').textContent ?? '';

describe('the plan form as you type', () => {
  it.each([
    {
      name: 'billing job, 10 days: manual, and a dry run is still to come',
      fill: { job: 'order-daily-mart', from: '2026-05-01', to: '2026-05-11', rowDiff: '0.2' },
      range: '10 daily partitions, 2026-05-01 to 2026-05-10 inclusive',
      tier: 'manualbilling data',
      flags: ['no-dry-run'],
    },
    {
      name: 'no billing, 5 days with something downstream: semi-auto',
      fill: { job: 'events-daily', from: '2026-05-01', to: '2026-05-06', rowDiff: '0.2' },
      range: '5 daily partitions, 2026-05-01 to 2026-05-05 inclusive',
      tier: 'semi-autoidempotency not proven on recorddownstream aggregates: dash.events',
      flags: ['no-dry-run'],
    },
    {
      name: 'no billing, 45 days: manual for the length alone',
      fill: { job: 'events-daily', from: '2026-05-01', to: '2026-06-15', rowDiff: '0.2' },
      range: '45 daily partitions, 2026-05-01 to 2026-06-14 inclusive',
      tier: 'manualrange of 45 days is over 30',
      flags: ['no-dry-run'],
    },
    {
      name: 'no pause between 30 partitions and no stop condition',
      fill: { job: 'events-daily', from: '2026-05-01', to: '2026-05-31', sleep: '0' },
      range: '30 daily partitions, 2026-05-01 to 2026-05-30 inclusive',
      tier: 'semi-autoidempotency not proven on recordrange of 30 days is over 7downstream aggregates: dash.events',
      flags: ['no-dry-run', 'no-throttle', 'no-stop-conditions'],
    },
    {
      name: 'a job with no validation rule',
      fill: { job: 'plain-daily', from: '2026-05-01', to: '2026-05-03', rowDiff: '0.2' },
      range: '2 daily partitions, 2026-05-01 to 2026-05-02 inclusive',
      tier: 'semi-autoidempotency not proven on record',
      flags: ['no-dry-run', 'no-validation'],
    },
  ])('$name', async (c) => {
    await fill(c.fill);
    expect(screen.getByTestId('range-words').textContent).toBe(c.range);
    expect(tierText()).toBe(c.tier);
    expect(flagCodes()).toEqual(c.flags);
    expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Create the runbook' }).disabled).toBe(false);
  });

  it('a vague range is a blocking red flag, names the field, and keeps the plan from being created', async () => {
    await fill({ job: 'order-daily-mart', from: 'last 3 months', to: '2026-05-11' });
    expect(flagCodes()).toContain('vague-range');
    const flag = [...screen.getByTestId('red-flags').querySelectorAll('li')].find((li) => li.textContent?.includes('vague-range'));
    expect(flag?.textContent).toContain('range.from "last 3 months" is not an absolute date');
    expect(flag?.textContent).toContain('blocks');
    expect(screen.getByText('from "last 3 months" is not a date: use YYYY-MM-DD, YYYY-MM (month) or YYYY-MM-DDTHH (hour)')).toBeTruthy();
    expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Create the runbook' }).disabled).toBe(true);
  });

  it('updates with every keystroke: the range grows, the tier follows', async () => {
    await fill({ job: 'events-daily', from: '2026-05-01', to: '2026-05-03', rowDiff: '0.2' });
    expect(screen.getByTestId('range-words').textContent).toBe('2 daily partitions, 2026-05-01 to 2026-05-02 inclusive');
    fireEvent.change(screen.getByLabelText('To (exclusive)'), { target: { value: '2026-06-03' } });
    expect(screen.getByTestId('range-words').textContent).toBe('33 daily partitions, 2026-05-01 to 2026-06-02 inclusive');
    expect(tierText()).toBe('manualrange of 33 days is over 30');
  });

  it('sends exactly the plan shown, then opens its runbook', async () => {
    await fill({ job: 'order-daily-mart', from: '2026-05-01', to: '2026-05-11', rowDiff: '0.2', requestId: 'bf-2026-06-order-refund' });
    fireEvent.click(screen.getByRole('button', { name: 'Create the runbook' }));
    await waitFor(() => expect(useApp.getState().view).toEqual({ name: 'runbook', runId: 'bf-1', step: null }));
    expect(bridge.calls.find((c) => c.name === 'plans:create')?.input).toEqual({
      plan: {
        request_id: 'bf-2026-06-order-refund',
        reason: '',
        job: 'order-daily-mart',
        range: { from: '2026-05-01', to: '2026-05-11' },
        write_mode: 'overwrite-partition',
        throttle: { sleep_ms: 1000, concurrency: 1 },
        stop: { max_consecutive_failures: 3, max_row_diff_ratio: 0.2 },
      },
    });
  });
});
