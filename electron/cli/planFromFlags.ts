/**
 * The plan of a run from command-line flags, flags checked against a saved plan file (a flag
 * that contradicts the plan is an error, never a silent override: docs/design.md §5), and the plan
 * changes a resume asks for — all from the one table of plan flags (runFlags.ts).
 */
import { userInfo } from 'node:os';
import { InputError, showValue } from '../../shared/errors.ts';
import type { Job, Plan } from '../../shared/schemas.ts';
import { planSchema } from '../../shared/schemas.ts';
import { fieldOf, sameValue, type PlanChange } from '../engine/runbook/retune.ts';
import { flagOfField, givenPlanFlags } from './runFlags.ts';

/** The options commander parsed, by attribute name (sleepMs, runId, …): read through the flag table. */
export type RunFlags = object;

/** A run id that the same flags produce again, so a dry run and its execution share a plan. */
export function defaultRunId(job: string, from: string, to: string): string {
  return `bf-${job}-${from}_${to}`.replace(/[^A-Za-z0-9._:-]/g, '-');
}

function set(target: Record<string, unknown>, field: string, value: unknown): void {
  const path = field.split('.');
  let node = target;
  for (const key of path.slice(0, -1)) node = (node[key] ??= {}) as Record<string, unknown>;
  node[path.at(-1) ?? field] = value;
}

/** The plan with the changes made, checked as a plan (a bad value names its flag). */
export function planWithChanges(plan: Plan, changes: readonly PlanChange[]): Plan {
  const raw = structuredClone(plan) as unknown as Record<string, unknown>;
  for (const c of changes) set(raw, c.field, c.value);
  return checkedPlan(raw);
}

/** Validates a plan put together from flags; a problem names the flag that set the field. */
export function checkedPlan(raw: Record<string, unknown>): Plan {
  const parsed = planSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.join('.') ?? '';
  const flag = flagOfField(field) ?? field;
  const value = issue ? issue.path.reduce<unknown>((v, k) => (v as Record<PropertyKey, unknown> | undefined)?.[k], raw) : undefined;
  throw new InputError(`${flag} ${showValue(value)}: ${issue?.message ?? 'invalid'}`, { field: flag, value });
}

export function planFromFlags(job: Job, flags: RunFlags): Plan {
  const given = givenPlanFlags(flags);
  const value = (field: string) => given.find((g) => g.field === field)?.value as string | undefined;
  const [from, to] = [value('range.from'), value('range.to')];
  if (!from || !to) {
    const missing = !from ? '--from' : '--to';
    throw new InputError(`${missing} is required: a backfill needs an explicit, closed range (--from inclusive, --to exclusive)`, {
      field: missing,
      hint: 'e.g. --from 2026-05-01 --to 2026-07-01',
    });
  }
  const raw: Record<string, unknown> = {
    request_id: defaultRunId(job.name, from, to),
    reason: '',
    job: job.name,
    write_mode: job.write_mode,
    throttle: { sleep_ms: 0, concurrency: 1 },
    stop: {},
    requested_by: currentUser(),
  };
  for (const g of given) set(raw, g.field, g.value);
  return checkedPlan(raw);
}

/** With --plan FILE, flags may repeat the plan but never contradict it: every plan flag is checked. */
export function checkFlagsAgainstPlan(plan: Plan, flags: RunFlags, planFile: string): void {
  for (const g of givenPlanFlags(flags)) {
    const inPlan = fieldOf(plan, g.field);
    if (!sameValue(g.value, inPlan)) {
      throw new InputError(`${g.name} ${showValue(g.value)} contradicts the plan (${showValue(inPlan)}): edit the plan or drop the flag`, {
        file: planFile,
        field: g.name,
        value: g.value,
      });
    }
  }
}

/** What the flags of a resume ask to change (the engine decides what may: retune.ts); --run-id names the run. */
export function resumeChanges(flags: RunFlags): PlanChange[] {
  return givenPlanFlags(flags)
    .filter((g) => g.field !== 'request_id')
    .map((g) => ({ field: g.field, value: g.value, name: g.name }));
}

function currentUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}
