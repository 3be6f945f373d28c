/**
 * Retuning a run: the throttle and the stop-condition thresholds may change after a plan was
 * signed — on a resume, or with `tune` while it runs — because they steer how fast it goes and
 * when it stops, never what it writes. The sign-off is bound to the plan's hash, which stays
 * the signed plan's; what a run executes with is that plan with its retunes laid over it
 * (kept in the run's settings, each change audited as 'run.retuned' and shown in the note).
 * Everything else (range, unit, write mode, job, request) would change the data or the request
 * that was signed: refused, with where to go instead.
 */
import { InputError, showValue } from '../../../shared/errors.ts';
import { planSchema, type Plan } from '../../../shared/schemas.ts';
import type { RunSettings } from '../store/index.ts';
import { retunable } from './retunable.ts';

export { liveRetunable, retunable } from './retunable.ts';

/** A plan field to set: its dotted path (`stop.max_replication_lag_s`) and its value. */
export interface PlanChange {
  field: string;
  value: unknown;
  /** how the user named it (`--sleep-ms`), for messages */
  name?: string;
}

/** The plan a run executes with: the signed plan, its retuned throttle and stop thresholds over it. */
export function effectivePlan(plan: Plan, settings: RunSettings): Plan {
  return {
    ...plan,
    throttle: {
      sleep_ms: settings.sleepMs ?? plan.throttle.sleep_ms,
      concurrency: settings.concurrency ?? plan.throttle.concurrency,
      ...(settings.dutyCycle !== undefined || plan.throttle.duty_cycle !== undefined
        ? { duty_cycle: settings.dutyCycle ?? plan.throttle.duty_cycle }
        : {}),
    },
    stop: { ...plan.stop, ...(settings.stop as Partial<Plan['stop']> | undefined) },
  };
}

export function fieldOf(plan: Plan, field: string): unknown {
  return field.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], plan);
}

/** Equal as data (an object compared by its JSON, keys in any order). */
export function sameValue(a: unknown, b: unknown): boolean {
  const canon = (v: unknown): string =>
    JSON.stringify(v, (_k, x: unknown) => (x && typeof x === 'object' && !Array.isArray(x) ? sorted(x) : x));
  return canon(a) === canon(b);
}

function sorted(o: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
}

export interface Retune {
  /** the settings patch to store (RunsRepo.updateSettings) */
  settings: RunSettings;
  /** `throttle.sleep_ms 200 → 2000; stop.max_replication_lag_s 1 → 30` */
  summary: string;
}

/**
 * The changes a resume asks for, against the plan the run executes with now: those that repeat
 * it are dropped, throttle and stop thresholds become a retune, anything else is refused.
 */
export function retuneFor(runId: string, current: Plan, changes: readonly PlanChange[]): Retune | null {
  const differing = changes.filter((c) => !sameValue(c.value, fieldOf(current, c.field)));
  const refused = differing.find((c) => !retunable(c.field));
  if (refused) {
    const name = refused.name ?? refused.field;
    throw new InputError(
      `${name} ${showValue(refused.value)} cannot change on a resume (run ${runId}'s plan has ${showValue(fieldOf(current, refused.field))}): ` +
        'it would change what the run writes, or the request that was signed',
      {
        field: name,
        value: refused.value,
        hint: `drop ${name} to continue run ${runId} as planned; throttle and stop thresholds may change on a resume (or with \`run-backfill tune --run-id ${runId}\` while it runs); for another range, unit, mode or job start a new run with a new --run-id`,
      },
    );
  }
  if (differing.length === 0) return null;
  const settings: RunSettings = {};
  const stop: Record<string, unknown> = {};
  for (const c of differing) {
    if (c.field === 'throttle.sleep_ms') settings.sleepMs = c.value as number;
    else if (c.field === 'throttle.concurrency') settings.concurrency = c.value as number;
    else if (c.field === 'throttle.duty_cycle') settings.dutyCycle = c.value as number;
    else stop[c.field.slice('stop.'.length)] = c.value;
  }
  if (Object.keys(stop).length > 0) settings.stop = stop;
  // The retuned plan must still be a plan: a throttle level above its critical level, say, is refused.
  const checked = planSchema.safeParse(effectivePlan(current, settings));
  if (!checked.success) {
    const issue = checked.error.issues[0];
    const field = issue?.path.join('.') ?? '';
    const named = differing.find((c) => c.field === field) ?? differing.find((c) => field.startsWith(c.field.split('.')[0] ?? ''));
    throw new InputError(`${named?.name ?? field}: ${issue?.message ?? 'not a valid plan value'}`, {
      field: named?.name ?? field,
      value: named?.value,
    });
  }
  const summary = differing.map((c) => `${c.field} ${showValue(fieldOf(current, c.field))} → ${showValue(c.value)}`).join('; ');
  return { settings, summary };
}
