/** Jobs and plans: what the plan form reads as you type, and creating the run it describes. */
import type { Handlers } from '../../../shared/contract.ts';
import { handle, type Guard, type IpcMainLike } from './ipc.ts';

export function registerPlanningHandlers(ipc: IpcMainLike, guard: Guard, s: Handlers): void {
  handle(ipc, guard, 'jobs:list', s.jobs.list);
  handle(ipc, guard, 'jobs:get', s.jobs.get);
  handle(ipc, guard, 'plans:create', s.plans.create);
}
