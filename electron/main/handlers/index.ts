/**
 * Registers a handler for every call of the contract, one module per domain. Electron main
 * passes ipcMain; the test harness passes its loopback server; tests pass a plain recorder.
 */
import type { Handlers } from '../../../shared/contract.ts';
import { registerAppHandlers } from './app.ts';
import { registerConnectionHandlers } from './connections.ts';
import { registerHistoryHandlers } from './history.ts';
import { registerIdentityHandlers } from './identities.ts';
import type { Guard, IpcMainLike } from './ipc.ts';
import { registerPlanningHandlers } from './planning.ts';
import { registerRunHandlers } from './run.ts';
import { registerRunbookHandlers } from './runbook.ts';
import { registerTrainingHandlers } from './training.ts';

export type { Guard, IpcEventLike, IpcMainLike } from './ipc.ts';

export function registerHandlers(ipc: IpcMainLike, guard: Guard, service: Handlers): void {
  registerAppHandlers(ipc, guard, service);
  registerConnectionHandlers(ipc, guard, service);
  registerPlanningHandlers(ipc, guard, service);
  registerRunbookHandlers(ipc, guard, service);
  registerIdentityHandlers(ipc, guard, service);
  registerRunHandlers(ipc, guard, service);
  registerHistoryHandlers(ipc, guard, service);
  registerTrainingHandlers(ipc, guard, service);
}
