import { describe, expect, it } from 'vitest';
import { automationTier, type Tier, type TierInput } from '../../shared/tier.ts';

const autoReady: TierInput = { billing: false, externalPartner: false, downstream: [], rangeDays: 3, idempotencyProven: true };

describe('automationTier', () => {
  const cases: { name: string; input: Partial<TierInput>; tier: Tier; reasons: string[] }[] = [
    { name: 'proven, short, nothing downstream', input: {}, tier: 'auto', reasons: [] },
    { name: 'exactly 7 days is still auto', input: { rangeDays: 7 }, tier: 'auto', reasons: [] },
    { name: 'a day shorter for DST is auto', input: { rangeDays: 6 + 23 / 24 }, tier: 'auto', reasons: [] },
    { name: 'just over 7 days', input: { rangeDays: 7.0001 }, tier: 'semi-auto', reasons: ['range of 7.0001 days is over 7'] },
    {
      name: 'a 7-day range across a fall back is 7.04 real days',
      input: { rangeDays: 7 + 1 / 24 },
      tier: 'semi-auto',
      reasons: ['range of 7.04 days is over 7'],
    },
    { name: '10 days', input: { rangeDays: 10 }, tier: 'semi-auto', reasons: ['range of 10 days is over 7'] },
    {
      name: 'idempotency not proven',
      input: { idempotencyProven: false },
      tier: 'semi-auto',
      reasons: ['idempotency not proven on record'],
    },
    {
      name: 'downstream aggregates',
      input: { downstream: ['dashboard.revenue_weekly', 'finance.monthly'] },
      tier: 'semi-auto',
      reasons: ['downstream aggregates: dashboard.revenue_weekly, finance.monthly'],
    },
    {
      name: 'every reason against auto, in order',
      input: { idempotencyProven: false, rangeDays: 30, downstream: ['dashboard.revenue_weekly'] },
      tier: 'semi-auto',
      reasons: ['idempotency not proven on record', 'range of 30 days is over 7', 'downstream aggregates: dashboard.revenue_weekly'],
    },
    {
      name: 'exactly 30 days is not manual',
      input: { rangeDays: 30, idempotencyProven: true },
      tier: 'semi-auto',
      reasons: ['range of 30 days is over 7'],
    },
    { name: '31 days is manual', input: { rangeDays: 31 }, tier: 'manual', reasons: ['range of 31 days is over 30'] },
    { name: 'just over 30 days', input: { rangeDays: 30.00001 }, tier: 'manual', reasons: ['range of 30.00001 days is over 30'] },
    { name: '61 days', input: { rangeDays: 61 }, tier: 'manual', reasons: ['range of 61 days is over 30'] },
    { name: 'billing, even for one proven day', input: { billing: true, rangeDays: 1 }, tier: 'manual', reasons: ['billing data'] },
    { name: 'external partner', input: { externalPartner: true }, tier: 'manual', reasons: ['sent to an external partner'] },
    {
      name: 'every manual reason, and only those',
      input: { billing: true, externalPartner: true, rangeDays: 61, idempotencyProven: false, downstream: ['x'] },
      tier: 'manual',
      reasons: ['billing data', 'sent to an external partner', 'range of 61 days is over 30'],
    },
  ];
  it.each(cases)('$name', ({ input, tier, reasons }) => {
    expect(automationTier({ ...autoReady, ...input })).toEqual({ tier, reasons });
  });
});
