/**
 * The app's engine for integration tests: the service every handler calls (the same one
 * Electron's IPC and browser mode use), on a folder workspace, plus the runbook's steps up to the
 * dry run as the app takes them, and the CLI's `--json` lines.
 */
import { expect } from 'vitest';
import type { DryRunView } from '../../shared/contractTypes.ts';
import { GateError } from '../../shared/errors.ts';
import { planSchema, type PlanInput } from '../../shared/schemas.ts';
import { createRunbookService, type RunbookService } from '../../electron/engine/runbook/service.ts';
import { folderWorkspace } from '../../electron/engine/runbook/workspace.ts';
import { runCli, type CliResult, type Workspace } from './workspace.ts';

export function appService(workspace: Workspace, env: NodeJS.ProcessEnv, actor = 'app@test'): RunbookService {
  return createRunbookService({
    workspace: folderWorkspace(workspace.dir, workspace.db),
    defaultDb: workspace.db,
    openSandbox: () => Promise.reject(new Error('no sandbox here')),
    secrets: { backend: 'unavailable', encrypt: () => Buffer.alloc(0), decrypt: () => '' },
    version: 'test',
    browserMode: true,
    actor,
    env,
    emit: () => undefined,
  });
}

/** The GateError `fn` is refused with (the test fails when it is not refused). */
export async function appRefusal(fn: () => unknown): Promise<GateError> {
  try {
    await fn();
  } catch (err) {
    expect(err).toBeInstanceOf(GateError);
    return err as GateError;
  }
  throw new Error('the app did not refuse');
}

/** The app's runbook up to step 3: the plan recorded, the sanity check, the snapshot, the dry run. */
export async function appDryRun(app: RunbookService, plan: PlanInput): Promise<DryRunView> {
  // As the handler hands it over: parsed by the contract's schema, defaults filled in.
  const { runId } = await app.plans.create({ plan: planSchema.parse(plan) });
  const sanity = await app.runbook.sanity({ runId });
  expect(sanity.blocked).toBe(false);
  await app.runbook.snapshot({ runId });
  return app.runbook.dryRun({ runId });
}

export interface JsonRun extends CliResult {
  lines: Record<string, unknown>[];
  /** the first line of this `type` */
  of<T = Record<string, unknown>>(type: string): T | undefined;
}

/** `run-backfill … --json`: the exit code and the JSON lines. */
export async function cliJson(ws: Workspace, args: string[]): Promise<JsonRun> {
  const r = await runCli(ws, [...args, '--json']);
  const lines = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { ...r, lines, of: <T>(type: string) => lines.find((l) => l.type === type) as T | undefined };
}
