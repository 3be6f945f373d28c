/**
 * What every runbook module of the service works with: the open workspace and its store, the
 * connections (with passwords, in this process only), who acts, and the event sink.
 */
import type { ProgressEvent } from '../../../shared/contractTypes.ts';
import type { Config } from '../../../shared/schemas.ts';
import type { Store } from '../store/index.ts';
import type { ConnectionsService } from './connections.ts';
import { runContext, type RunContext } from './planning.ts';
import type { Workspace } from './workspace.ts';

export interface EngineScope {
  store: Store;
  workspace: Workspace;
  connections: ConnectionsService;
  /** `user@host`, as the CLI records it */
  actor: string;
  emit: (event: ProgressEvent) => void;
  /** an executor of this process is driving the run */
  isLive: (runId: string) => boolean;
}

export function contextOf(scope: EngineScope, runId: string): RunContext {
  return runContext(scope.store, scope.workspace.info.jobsDir, scope.connections.effective().config, runId);
}

export function engineConfig(scope: EngineScope): { config: Config; env: NodeJS.ProcessEnv } {
  return scope.connections.effective();
}

export const now = (): string => new Date().toISOString();
