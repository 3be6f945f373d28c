/**
 * "Start this scenario's plan": the plan form pre-filled with the scenario's job and range, as
 * an experienced operator would start it — a request id that says which training load it
 * belongs to, a reason, a throttle and a stop condition. Every field stays editable.
 */
import type { ScenarioView } from '../../shared/contractTypes.ts';
import type { PlanDraft } from './planDraft.ts';

/** '2026-07-01T09:30:12.345Z' → 'train-1-20260701-093012': one request id per load, stable across reloads. */
export function trainingRequestId(scenarioId: number, loadedAt: string): string {
  const stamp = loadedAt.replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `train-${scenarioId}-${stamp}`;
}

export function scenarioDraft(scenario: ScenarioView, loadedAt: string): Partial<PlanDraft> {
  return {
    job: scenario.job,
    requestId: trainingRequestId(scenario.id, loadedAt),
    reason: `Training scenario ${scenario.id}: ${scenario.title}`,
    from: scenario.range.from,
    to: scenario.range.to,
    writeMode: '',
    sleepMs: '200',
    concurrency: '1',
    maxRowDiffRatio: '0.5',
    owner: 'sandbox-training',
  };
}
