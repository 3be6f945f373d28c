/**
 * The Training screen's calls: the sandbox scenarios (electron/engine/sandbox/training.ts)
 * over the open workspace. **Important**: loading a scenario drops and reseeds the warehouse,
 * so every call refuses a folder workspace, and loading refuses while a run executes here.
 */
import type { ScenarioLoadedView, ScenarioVerdictView, TrainingView } from '../../../shared/contractTypes.ts';
import { GateError } from '../../../shared/errors.ts';
import { sandboxLeadStatus } from '../sandbox/sandboxLead.ts';
import { checkTrainingScenario, currentScenario, listScenarios, loadTrainingScenario, type ScenarioSummary } from '../sandbox/training.ts';
import { engineConfig, type EngineScope } from './scope.ts';
import { ServiceError } from './secrets.ts';

export function trainingView(scope: EngineScope): TrainingView {
  requireSandbox(scope);
  return {
    scenarios: listScenarios(),
    current: currentScenario(scope.store),
    lead: sandboxLeadStatus(scope.store, engineConfig(scope).env),
  };
}

export async function loadScenarioHere(scope: EngineScope, id: number): Promise<ScenarioLoadedView> {
  requireSandbox(scope);
  const live = scope.store.runs.list({ status: 'running' }).filter((r) => scope.isLive(r.runId));
  if (live.length > 0) {
    throw new GateError(`run ${live.map((r) => r.runId).join(', ')} is executing in the Sandbox`, [
      'pause or stop it before loading a scenario: loading resets the data under it',
    ]);
  }
  const { config, env } = engineConfig(scope);
  const { loadedAt, lead, ...scenario } = await loadTrainingScenario({ config, env, store: scope.store, id, actor: scope.actor });
  return { scenario: view(scenario), loadedAt, lead };
}

export async function checkScenarioHere(scope: EngineScope, id: number): Promise<ScenarioVerdictView> {
  requireSandbox(scope);
  const { config, env } = engineConfig(scope);
  const verdict = await checkTrainingScenario({ config, env, store: scope.store, id });
  return {
    scenario: view(verdict.scenario),
    ok: verdict.ok,
    loadedAt: verdict.loadedAt,
    checks: verdict.checks.map(({ name, ok, detail }) => ({ name, ok, detail })),
  };
}

function requireSandbox(scope: EngineScope): void {
  const { info, config } = scope.workspace;
  if (info.kind === 'sandbox' && config.sandbox) return;
  throw new ServiceError(
    `training scenarios run only in the Sandbox, and the open workspace is the folder ${info.dir}`,
    'unavailable',
    'open the Sandbox on the Workspace screen ("Use the Sandbox"): loading a scenario resets its data, so it is never offered on a real workspace',
  );
}

function view(s: ScenarioSummary): ScenarioLoadedView['scenario'] {
  const { id, slug, title, story, job, range, steps, fixed, unavailable } = s;
  return { id, slug, title, story, job, range, steps, fixed, ...(unavailable ? { unavailable } : {}) };
}
