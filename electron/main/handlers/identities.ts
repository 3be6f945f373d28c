/** Signing identities: public keys registered in the ledger, private keys passphrase-protected on disk. */
import type { Handlers } from '../../../shared/contract.ts';
import { handle, type Guard, type IpcMainLike } from './ipc.ts';

export function registerIdentityHandlers(ipc: IpcMainLike, guard: Guard, s: Handlers): void {
  handle(ipc, guard, 'identities:list', s.identities.list);
  handle(ipc, guard, 'identities:create', s.identities.create);
}
