/**
 * The one table of plan flags (electron/cli/runFlags.ts): commander's options come from it, a
 * plan built from flags puts each value where the table says, every flag that contradicts a
 * `--plan` is an error naming both values, and a resume may change the throttle and stop
 * thresholds only (engine/runbook/retune.ts).
 */
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../shared/errors.ts';
import { jobSchema, planSchema, type Plan } from '../../shared/schemas.ts';
import { checkFlagsAgainstPlan, planFromFlags, planWithChanges, resumeChanges } from '../../electron/cli/planFromFlags.ts';
import { flagName, optionOf, PLAN_FLAGS } from '../../electron/cli/runFlags.ts';
import { effectivePlan, fieldOf, retunable, retuneFor } from '../../electron/engine/runbook/retune.ts';

function parse(argv: string[]): Record<string, unknown> {
  const cmd = new Command('run').exitOverride().allowExcessArguments();
  for (const flag of PLAN_FLAGS) cmd.addOption(optionOf(flag));
  cmd.parse(argv, { from: 'user' });
  return cmd.opts();
}

const job = jobSchema.parse({
  name: 'orders',
  unit: 'day',
  source: { connection: 'w', query: 'select 1' },
  target: { connection: 'w', table: 'mart.t', partition_column: 'd', key: ['d'] },
  write_mode: 'overwrite-partition',
});

const plan: Plan = planSchema.parse({
  request_id: 'bf-plan-1',
  reason: 'refund mapping bug',
  job: 'orders',
  range: { from: '2026-05-01', to: '2026-07-01' },
  unit: 'day',
  write_mode: 'overwrite-partition',
  throttle: { sleep_ms: 200, concurrency: 1, duty_cycle: 0.5 },
  stop: {
    max_replication_lag_s: 30,
    critical_replication_lag_s: 300,
    max_lock_wait_ms: 5000,
    critical_lock_wait_ms: 20000,
    max_throttle_s: 600,
    settle_ms: 3000,
    check_interval_ms: 1000,
    max_consecutive_failures: 3,
    max_row_diff_ratio: 0.2,
    replica: 'replica',
    no_run_window: { from: '09:00', to: '18:00' },
    panic_file: '/tmp/panic',
  },
  requested_by: 'alice',
  canary: 2,
  accept_purged: ['2026-05-03'],
  overwrite_closed: ['2026-05-04'],
  acknowledge: [{ flag: 'same-code', reason: 'edited by hand' }],
});

/** For each flag: a command line that repeats the plan, and one that contradicts it. */
const CASES: Record<string, [repeat: string, contradict: string]> = {
  '--run-id': ['bf-plan-1', 'bf-other'],
  '--from': ['2026-05-01', '2026-06-01'],
  '--to': ['2026-07-01', '2026-08-01'],
  '--unit': ['day', 'hour'],
  '--mode': ['overwrite-partition', 'upsert'],
  '--sleep-ms': ['200', '2000'],
  '--concurrency': ['1', '4'],
  '--duty-cycle': ['0.5', '0.25'],
  '--max-consecutive-failures': ['3', '5'],
  '--max-replication-lag-s': ['30', '120'],
  '--critical-replication-lag-s': ['300', '600'],
  '--critical-lock-wait-ms': ['20000', '30000'],
  '--max-throttle-s': ['600', '60'],
  '--settle-ms': ['3000', '500'],
  '--check-interval-ms': ['1000', '500'],
  '--replica': ['replica', 'other-replica'],
  '--max-lock-wait-ms': ['5000', '1000'],
  '--max-row-diff-ratio': ['0.2', '0.5'],
  '--no-run-window': ['09:00-18:00', '08:00-20:00'],
  '--panic-file': ['/tmp/panic', '/tmp/other'],
  '--reason': ['refund mapping bug', 'another reason'],
  '--requested-by': ['alice', 'bob'],
  '--canary': ['2', '0'],
  '--accept-purged': ['2026-05-03', '2026-05-05'],
  '--overwrite-closed': ['2026-05-04', '2026-05-06'],
  '--acknowledge': ['same-code:edited by hand', 'abnormal-size:a campaign day'],
};

describe('the table of plan flags', () => {
  it('has a case here for every flag it lists (a new flag needs one)', () => {
    expect(PLAN_FLAGS.map(flagName).sort()).toEqual(Object.keys(CASES).sort());
  });

  it('builds a plan with each value where the table says', () => {
    const argv = Object.entries(CASES).flatMap(([flag, [value]]) => [flag, value]);
    const built = planFromFlags(job, parse(argv));
    for (const flag of PLAN_FLAGS) expect(fieldOf(built, flag.field), flagName(flag)).toEqual(fieldOf(plan, flag.field));
  });

  it.each(Object.entries(CASES))('%s may repeat a --plan', (flag, [repeat]) => {
    expect(() => checkFlagsAgainstPlan(plan, parse([flag, repeat]), 'plan.yaml')).not.toThrow();
  });

  it.each(Object.entries(CASES))('%s contradicting a --plan is an error naming both values', (flag, [repeat, contradict]) => {
    let error: unknown;
    try {
      checkFlagsAgainstPlan(plan, parse([flag, contradict]), 'plan.yaml');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(InputError);
    const e = error as InputError;
    expect(e.details).toMatchObject({ file: 'plan.yaml', field: flag });
    const shown = (v: string) => (flag === '--no-run-window' ? v.split('-')[0] : flag === '--acknowledge' ? v.split(':')[0] : v);
    expect(e.message).toContain(`${flag} `);
    expect(e.message).toContain(shown(contradict) ?? contradict);
    expect(e.message).toContain(shown(repeat) ?? repeat);
    expect(e.message).toContain('contradicts the plan');
  });
});

describe('a resume', () => {
  it('retunes throttle and stop thresholds, over what the run executes with now', () => {
    const changes = resumeChanges(
      parse(['--run-id', 'bf-plan-1', '--sleep-ms', '2000', '--max-replication-lag-s', '120', '--concurrency', '1']),
    );
    const retune = retuneFor('bf-plan-1', plan, changes);
    expect(retune?.settings).toEqual({ sleepMs: 2000, stop: { max_replication_lag_s: 120 } });
    expect(retune?.summary).toBe('throttle.sleep_ms 200 → 2000; stop.max_replication_lag_s 30 → 120');
    const executed = effectivePlan(plan, { sleepMs: 2000, concurrency: 1, ...retune?.settings });
    expect(executed.throttle.sleep_ms).toBe(2000);
    expect(executed.stop.max_replication_lag_s).toBe(120);
    expect(executed.stop.max_lock_wait_ms).toBe(5000);
    expect(executed.range).toEqual(plan.range);
  });

  it('that repeats the plan retunes nothing', () => {
    expect(retuneFor('bf-plan-1', plan, resumeChanges(parse(['--sleep-ms', '200', '--from', '2026-05-01'])))).toBeNull();
  });

  it.each(PLAN_FLAGS.filter((f) => !retunable(f.field) && f.field !== 'request_id').map((f) => [flagName(f)]))(
    '%s that would change the data or the signed request is refused, pointing at tune and a new run',
    (flag) => {
      const [, contradict] = CASES[flag] ?? ['', ''];
      let error: unknown;
      try {
        retuneFor('bf-plan-1', plan, resumeChanges(parse([flag, contradict])));
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(InputError);
      const e = error as InputError;
      expect(e.message).toContain(`${flag} `);
      expect(e.message).toContain('cannot change on a resume');
      expect(e.details.hint).toContain('run-backfill tune --run-id bf-plan-1');
      expect(e.details.hint).toContain('new --run-id');
    },
  );

  it('retunes the duty cycle and the throttle levels; a throttle level above its critical level is refused', () => {
    const retune = retuneFor('bf-plan-1', plan, resumeChanges(parse(['--duty-cycle', '0.25', '--max-throttle-s', '60'])));
    expect(retune?.settings).toEqual({ dutyCycle: 0.25, stop: { max_throttle_s: 60 } });
    expect(effectivePlan(plan, retune?.settings ?? {}).throttle.duty_cycle).toBe(0.25);
    expect(() => retuneFor('bf-plan-1', plan, resumeChanges(parse(['--max-replication-lag-s', '400'])))).toThrow(
      /--max-replication-lag-s: critical_replication_lag_s 300 is below max_replication_lag_s 400/,
    );
  });

  it('checks a retuned value as a plan value, naming its flag', () => {
    expect(() => planWithChanges(plan, resumeChanges(parse(['--no-run-window', '25:00-26:00'])))).toThrow(/--no-run-window .*HH:MM/);
  });
});
