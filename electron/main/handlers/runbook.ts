/**
 * The runbook's steps 1–4: sanity, snapshot, impact scope (dry run) and the lead's sign-off.
 * Each refuses in the engine when its step is locked; long ones report run:progress events.
 */
import type { Handlers } from '../../../shared/contract.ts';
import { handle, type Guard, type IpcMainLike } from './ipc.ts';

export function registerRunbookHandlers(ipc: IpcMainLike, guard: Guard, s: Handlers): void {
  handle(ipc, guard, 'runbook:get', s.runbook.get);
  handle(ipc, guard, 'runbook:recorded', s.runbook.recorded);
  handle(ipc, guard, 'runbook:sanity', s.runbook.sanity);
  handle(ipc, guard, 'runbook:snapshot', s.runbook.snapshot);
  handle(ipc, guard, 'runbook:dryRun', s.runbook.dryRun);
  handle(ipc, guard, 'runbook:signoffStatus', s.runbook.signoffStatus);
  handle(ipc, guard, 'runbook:signoffRequest', s.runbook.signoffRequest);
  handle(ipc, guard, 'runbook:signHere', s.runbook.signHere);
  handle(ipc, guard, 'runbook:importSignature', s.runbook.importSignature);
}
