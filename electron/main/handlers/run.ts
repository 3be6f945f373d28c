/**
 * Steps 5–7: execute (start and resume are one call; pause and stop act at a partition
 * boundary), the row-count comparison, and closing with the incident note.
 */
import type { Handlers } from '../../../shared/contract.ts';
import { handle, type Guard, type IpcMainLike } from './ipc.ts';

export function registerRunHandlers(ipc: IpcMainLike, guard: Guard, s: Handlers): void {
  handle(ipc, guard, 'run:start', s.run.start);
  handle(ipc, guard, 'run:pause', s.run.pause);
  handle(ipc, guard, 'run:stop', s.run.stop);
  handle(ipc, guard, 'run:abandon', s.run.abandon);
  handle(ipc, guard, 'run:compare', s.run.compare);
  handle(ipc, guard, 'run:close', s.run.close);
  handle(ipc, guard, 'run:downstreamPlans', s.run.downstreamPlans);
  handle(ipc, guard, 'run:note', s.run.note);
}
