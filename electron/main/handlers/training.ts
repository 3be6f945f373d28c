/** Training: the Sandbox's scenarios — list, load (resets the Sandbox's data), check "fixed". */
import type { Handlers } from '../../../shared/contract.ts';
import { handle, type Guard, type IpcMainLike } from './ipc.ts';

export function registerTrainingHandlers(ipc: IpcMainLike, guard: Guard, s: Handlers): void {
  handle(ipc, guard, 'training:list', s.training.list);
  handle(ipc, guard, 'training:load', s.training.load);
  handle(ipc, guard, 'training:check', s.training.check);
}
