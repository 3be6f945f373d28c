/** The app and its workspace: who and where we are, and switching between folder and Sandbox. */
import type { Handlers } from '../../../shared/contract.ts';
import { handle, type Guard, type IpcMainLike } from './ipc.ts';

export function registerAppHandlers(ipc: IpcMainLike, guard: Guard, s: Handlers): void {
  handle(ipc, guard, 'app:info', s.app.info);
  handle(ipc, guard, 'workspace:open', s.workspace.open);
  handle(ipc, guard, 'workspace:sandbox', s.workspace.sandbox);
}
