/**
 * Step gating: each runbook step is unlocked only when the one before it holds; a blocked
 * step keeps every later one locked; a step this build cannot perform is passed over, never
 * faked.
 */
import { describe, expect, it } from 'vitest';
import { runbookSteps, stepOpen, type StepFacts, type StepStatus } from '../../shared/runbookSteps.ts';

const fresh: StepFacts = {
  sanity: null,
  snapshot: null,
  dryRun: null,
  signoff: { required: true, valid: null, problems: [] },
  run: { status: 'planned', live: false, published: 0, failed: 0, total: 10, haltReason: null },
  comparison: null,
  closed: null,
  unavailable: {},
};
const sane = { sanity: { evidenceId: 1, blocked: false, failed: [] } };
const snapped = { ...sane, snapshot: { evidenceId: 2, partitions: 10 } };
const measured = { ...snapped, dryRun: { evidenceId: 3, summary: '10 daily partitions' } };
const signed = { ...measured, signoff: { required: true, valid: { signer: 'lead' }, problems: [] } };
const ran = { ...signed, run: { ...fresh.run, status: 'succeeded' as const, published: 10 } };

const statuses = (facts: Partial<StepFacts>) => runbookSteps({ ...fresh, ...facts }).map((s) => s.status);

describe('runbook step gating', () => {
  it.each<[string, Partial<StepFacts>, StepStatus[]]>([
    ['nothing done yet: only the sanity check is open', {}, ['ready', 'locked', 'locked', 'locked', 'locked', 'locked', 'locked']],
    ['sanity holds: the snapshot opens', sane, ['done', 'ready', 'locked', 'locked', 'locked', 'locked', 'locked']],
    [
      'a failing fail-rule blocks everything after it',
      { sanity: { evidenceId: 1, blocked: true, failed: ['null_rate(orders.customer_id)'] } },
      ['blocked', 'locked', 'locked', 'locked', 'locked', 'locked', 'locked'],
    ],
    ['snapshot taken: the dry run opens', snapped, ['done', 'done', 'ready', 'locked', 'locked', 'locked', 'locked']],
    ['dry run on record: the sign-off opens', measured, ['done', 'done', 'done', 'ready', 'locked', 'locked', 'locked']],
    [
      'a sign-off that does not count blocks execution',
      { ...measured, signoff: { required: true, valid: null, problems: ['lead is the operator'] } },
      ['done', 'done', 'done', 'blocked', 'locked', 'locked', 'locked'],
    ],
    [
      'no sign-off needed below the manual tier',
      { ...measured, signoff: { required: false, valid: null, problems: [] } },
      ['done', 'done', 'done', 'done', 'ready', 'locked', 'locked'],
    ],
    ['signed: execution opens', signed, ['done', 'done', 'done', 'done', 'ready', 'locked', 'locked']],
    [
      'executing',
      { ...signed, run: { ...fresh.run, status: 'running', live: true, published: 4 } },
      ['done', 'done', 'done', 'done', 'active', 'locked', 'locked'],
    ],
    [
      'halted by a stop condition: still the execute step',
      { ...signed, run: { ...fresh.run, status: 'halted', haltReason: 'panic file exists', published: 4 } },
      ['done', 'done', 'done', 'done', 'active', 'locked', 'locked'],
    ],
    ['succeeded: the comparison opens', ran, ['done', 'done', 'done', 'done', 'done', 'ready', 'locked']],
    [
      'compared: close opens',
      { ...ran, comparison: { evidenceId: 9, ok: true } },
      ['done', 'done', 'done', 'done', 'done', 'done', 'ready'],
    ],
    [
      'closed',
      { ...ran, comparison: { evidenceId: 9, ok: true }, closed: { evidenceId: 10 } },
      ['done', 'done', 'done', 'done', 'done', 'done', 'done'],
    ],
    [
      'a re-check that now fails locks what was not done yet, keeps what was',
      { ...snapped, sanity: { evidenceId: 5, blocked: true, failed: ['x'] } },
      ['blocked', 'done', 'locked', 'locked', 'locked', 'locked', 'locked'],
    ],
    [
      'a step this build lacks is passed over and says so',
      { unavailable: { snapshot: 'no snapshot engine' }, ...sane },
      ['done', 'unavailable', 'ready', 'locked', 'locked', 'locked', 'locked'],
    ],
  ])('%s', (_name, facts, expected) => {
    expect(statuses(facts)).toEqual(expected);
  });

  it('says what unlocks a locked step and what blocks a blocked one', () => {
    const steps = runbookSteps({
      ...fresh,
      ...measured,
      signoff: { required: true, valid: null, problems: ['the sign-off by ann does not count: ann is the operator executing this run'] },
    });
    expect(steps.find((s) => s.id === 'signoff')?.detail).toBe(
      'the sign-off by ann does not count: ann is the operator executing this run',
    );
    expect(steps.find((s) => s.id === 'execute')?.detail).toBe('Unlocked when "Lead sign-off" holds.');
    expect(runbookSteps({ ...fresh, unavailable: { snapshot: 'no snapshot engine' } }).find((s) => s.id === 'snapshot')?.detail).toBe(
      'Not available in this build: no snapshot engine',
    );
  });

  it('stepOpen: the engine refuses an action whose step is locked or unavailable', () => {
    const steps = runbookSteps({ ...fresh, ...sane, unavailable: { impact: 'x' } });
    expect(['sanity', 'snapshot', 'impact', 'signoff'].map((id) => stepOpen(steps, id as never))).toEqual([true, true, false, false]);
  });

  it('an interrupted run (status running, nobody driving it) offers resume', () => {
    const step = runbookSteps({ ...fresh, ...signed, run: { ...fresh.run, status: 'running', live: false, published: 3 } }).find(
      (s) => s.id === 'execute',
    );
    expect(step).toMatchObject({
      status: 'active',
      detail: 'Interrupted: no executor is driving it (3/10 published). Resume continues where it stopped.',
    });
  });
});
