/**
 * Connections. **Important**: a password only ever travels renderer → main (connections:save);
 * no result carries one back, and errors pass through the guard's redaction.
 */
import type { Handlers } from '../../../shared/contract.ts';
import { handle, type Guard, type IpcMainLike } from './ipc.ts';

export function registerConnectionHandlers(ipc: IpcMainLike, guard: Guard, s: Handlers): void {
  handle(ipc, guard, 'connections:list', s.connections.list);
  handle(ipc, guard, 'connections:save', s.connections.save);
  handle(ipc, guard, 'connections:remove', s.connections.remove);
  handle(ipc, guard, 'connections:test', s.connections.test);
}
