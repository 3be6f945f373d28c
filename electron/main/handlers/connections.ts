/**
 * Connections and the app's named secrets. **Important**: a password or a secret only ever
 * travels renderer → main (connections:save, secrets:save); no result carries one back, and
 * errors pass through the guard's redaction.
 */
import type { Handlers } from '../../../shared/contract.ts';
import { handle, type Guard, type IpcMainLike } from './ipc.ts';

export function registerConnectionHandlers(ipc: IpcMainLike, guard: Guard, s: Handlers): void {
  handle(ipc, guard, 'connections:list', s.connections.list);
  handle(ipc, guard, 'connections:save', s.connections.save);
  handle(ipc, guard, 'connections:remove', s.connections.remove);
  handle(ipc, guard, 'connections:test', s.connections.test);
  handle(ipc, guard, 'secrets:list', s.secrets.list);
  handle(ipc, guard, 'secrets:save', s.secrets.save);
  handle(ipc, guard, 'secrets:remove', s.secrets.remove);
}
