// The automation tier (docs/design.md §1, source article 001): how much a person must do.
//   manual     billing or settlement data, data sent to an external partner, or a range over 30 days
//   auto       idempotency proven on record, range at most 7 days, nothing downstream aggregates it
//   semi-auto  everything in between: a person triggers and approves a dry run, the system executes
export type Tier = 'auto' | 'semi-auto' | 'manual';

export interface TierInput {
  billing: boolean;
  externalPartner: boolean;
  downstream: readonly string[];
  /** real elapsed days covered by the range (see rangeDays in partitions.ts) */
  rangeDays: number;
  idempotencyProven: boolean;
}

export const AUTO_MAX_DAYS = 7;
export const MANUAL_OVER_DAYS = 30;

export function automationTier(input: TierInput): { tier: Tier; reasons: string[] } {
  const manual: string[] = [];
  if (input.billing) manual.push('billing data');
  if (input.externalPartner) manual.push('sent to an external partner');
  if (input.rangeDays > MANUAL_OVER_DAYS)
    manual.push(`range of ${days(input.rangeDays, MANUAL_OVER_DAYS)} days is over ${MANUAL_OVER_DAYS}`);
  if (manual.length > 0) return { tier: 'manual', reasons: manual };

  const notAuto: string[] = [];
  if (!input.idempotencyProven) notAuto.push('idempotency not proven on record');
  if (input.rangeDays > AUTO_MAX_DAYS) notAuto.push(`range of ${days(input.rangeDays, AUTO_MAX_DAYS)} days is over ${AUTO_MAX_DAYS}`);
  if (input.downstream.length > 0) notAuto.push(`downstream aggregates: ${input.downstream.join(', ')}`);
  return notAuto.length > 0 ? { tier: 'semi-auto', reasons: notAuto } : { tier: 'auto', reasons: [] };
}

/** Two decimals at most, unless rounding would hide why the limit was crossed (7.0001 is not "7"). */
function days(value: number, limit: number): string {
  const rounded = Number(value.toFixed(2));
  return String(rounded > limit ? rounded : value);
}
