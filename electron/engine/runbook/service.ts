/**
 * The engine-side API the app's handlers call: one function per contract call (shared/
 * contract.ts), over the open workspace. Electron main and the test harness both build it
 * here, so the UI drives the same engine whichever host it runs in.
 */
import { hostname, userInfo } from 'node:os';
import type { Handlers } from '../../../shared/contract.ts';
import type { AppInfo, ProgressEvent } from '../../../shared/contractTypes.ts';
import { GateError } from '../../../shared/errors.ts';
import { loadJob } from '../plan/load.ts';
import { openStore, type Store } from '../store/index.ts';
import { createIdentity, importSignature, listIdentities, signHere, signoffRequestFile, signoffStatus } from './appSignoffs.ts';
import { closeStep, compareStep, latestComparison, noteFile } from './closing.ts';
import { createConnections, type ConnectionsService } from './connections.ts';
import { createAppSecrets, type AppSecretsService } from './appSecrets.ts';
import { createExecutions } from './execution.ts';
import { evidenceById, listRuns, runDetail } from './history.ts';
import { runStory } from './runStory.ts';
import { createPlan, jobSummary, listJobs, runSummary } from './planning.ts';
import { abandonRun, canaryView } from './canary.ts';
import { downstreamPlansOf } from './downstream.ts';
import { contextOf, type EngineScope } from './scope.ts';
import type { SecretBox } from './secrets.ts';
import { dryRunStep, recordedSteps, runbookView, sanityStep, snapshotStep } from './steps.ts';
import { checkScenarioHere, loadScenarioHere, trainingView } from './training.ts';
import { folderWorkspace, type Workspace } from './workspace.ts';

export interface ServiceOptions {
  workspace: Workspace;
  secrets: SecretBox;
  version: string;
  browserMode: boolean;
  emit: (event: ProgressEvent) => void;
  /** starts the Sandbox when the user switches back to it */
  openSandbox: () => Promise<Workspace>;
  /** the app's own ledger, for folder workspaces whose config names none */
  defaultDb: string;
  actor?: string;
  env?: NodeJS.ProcessEnv;
}

export interface RunbookService extends Handlers {
  /** Hides every password this process knows in a message (errors leaving main pass through it). */
  redact: (text: string) => string;
  /** Stops executors at their partition boundary, closes the store and the workspace. */
  close: () => Promise<void>;
}

export function defaultActor(): string {
  try {
    return `${userInfo().username}@${hostname()}`;
  } catch {
    return `unknown@${hostname()}`;
  }
}

interface Open {
  workspace: Workspace;
  store: Store;
  connections: ConnectionsService;
  appSecrets: AppSecretsService;
}

export function createRunbookService(opts: ServiceOptions): RunbookService {
  const actor = opts.actor ?? defaultActor();
  const env = opts.env ?? process.env;
  const open = (workspace: Workspace): Open => {
    const store = openStore(workspace.info.dbFile);
    const appSecrets = createAppSecrets({ store, secrets: opts.secrets, actor });
    return {
      workspace,
      store,
      appSecrets,
      connections: createConnections({ workspace, store, secrets: opts.secrets, actor, env, appSecrets }),
    };
  };
  let current = open(opts.workspace);
  const executions = createExecutions(() => scope());
  const scope = (): EngineScope => ({ ...current, actor, emit: opts.emit, isLive: (runId) => executions.isLive(runId) });

  async function switchTo(next: () => Promise<Workspace> | Workspace) {
    if (current.store.runs.list({ status: 'running' }).some((r) => executions.isLive(r.runId))) {
      throw new GateError('a run is executing in this workspace', ['pause or stop it before switching workspaces']);
    }
    const workspace = await next();
    const previous = current;
    current = open(workspace);
    previous.store.close();
    await previous.workspace.stop();
    return current.workspace.info;
  }

  const info = (): AppInfo => ({
    version: opts.version,
    workspace: current.workspace.info,
    operator: actor,
    secretStorage: opts.secrets.backend,
    browserMode: opts.browserMode,
  });

  return {
    app: { info },
    workspace: {
      open: ({ dir }) => switchTo(() => folderWorkspace(dir, opts.defaultDb)),
      sandbox: () => switchTo(opts.openSandbox),
    },
    connections: {
      list: () => current.connections.list(),
      save: (args) => current.connections.save(args),
      remove: ({ name }) => current.connections.remove(name),
      test: ({ name }) => current.connections.test(name),
    },
    secrets: {
      list: () => current.appSecrets.list(),
      save: (args) => current.appSecrets.save(args),
      remove: ({ name }) => current.appSecrets.remove(name),
    },
    jobs: {
      list: () => listJobs(current.workspace.info.jobsDir, current.connections.effective().config),
      get: ({ name }) => {
        const { job } = loadJob(current.workspace.info.jobsDir, name, current.connections.effective().config);
        return { summary: jobSummary(job), job };
      },
    },
    plans: {
      create: ({ plan }) => createPlan(current.store, current.workspace.info.jobsDir, current.connections.effective().config, plan, actor),
    },
    runbook: {
      get: ({ runId }) => runbookView(scope(), runId),
      recorded: ({ runId }) => ({
        ...recordedSteps(scope(), runId),
        comparison: latestComparison(scope(), runId),
        canary: canaryView(scope().store, runId),
      }),
      sanity: ({ runId }) => sanityStep(scope(), runId),
      snapshot: ({ runId }) => snapshotStep(scope(), runId),
      dryRun: ({ runId }) => dryRunStep(scope(), runId),
      signoffStatus: ({ runId }) => signoffStatus(scope(), contextOf(scope(), runId)),
      signoffRequest: ({ runId }) => signoffRequestFile(scope(), runId),
      signHere: (args) => signHere(scope(), args),
      importSignature: (args) => importSignature(scope(), args),
    },
    identities: {
      list: () => listIdentities(scope()),
      create: (args) => createIdentity(scope(), args),
    },
    run: {
      start: ({ runId, reprocess }) => executions.start(runId, reprocess),
      pause: ({ runId }) => executions.pause(runId),
      stop: ({ runId }) => executions.stop(runId),
      abandon: ({ runId, reason }) => {
        if (executions.isLive(runId)) throw new GateError(`run ${runId} is executing in this app`, ['stop it first']);
        return runSummary(abandonRun(current.store, runId, actor, reason));
      },
      compare: ({ runId }) => compareStep(scope(), runId),
      close: (args) => closeStep(scope(), args),
      downstreamPlans: ({ runId }) => downstreamPlansOf(scope(), runId),
      note: ({ runId, format, signer, passphrase }) => noteFile(scope(), runId, format, signer, passphrase),
    },
    history: {
      list: (q) => listRuns(current.store, q),
      get: ({ runId }) => runDetail(current.store, runId),
      story: ({ runId }) => runStory(current.store, runId, actor),
    },
    evidence: {
      get: ({ id }) => evidenceById(current.store, id),
    },
    training: {
      list: () => trainingView(scope()),
      load: ({ id }) => loadScenarioHere(scope(), id),
      check: ({ id }) => checkScenarioHere(scope(), id),
    },
    redact: (text) => current.connections.redact(text),
    async close() {
      await executions.stopAll(30_000);
      current.store.close();
      await current.workspace.stop();
    },
  };
}
