/** History: past runs, one run's timeline and partitions, and any piece of evidence. Reads SQLite only. */
import type { Handlers } from '../../../shared/contract.ts';
import { handle, type Guard, type IpcMainLike } from './ipc.ts';

export function registerHistoryHandlers(ipc: IpcMainLike, guard: Guard, s: Handlers): void {
  handle(ipc, guard, 'history:list', s.history.list);
  handle(ipc, guard, 'history:get', s.history.get);
  handle(ipc, guard, 'history:story', s.history.story);
  handle(ipc, guard, 'evidence:get', s.evidence.get);
}
