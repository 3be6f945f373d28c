/**
 * Whether a run the ledger says is `running` is really being driven: its lease held by a live
 * executor, or interrupted — the process killed, crashed or its lease run out — so that `status`
 * never shows a dead run as "running 20/30" without saying it can be resumed.
 */
import { leaseHolder } from './processAlive.ts';

export interface Liveness {
  /** `running` (a live executor holds the lease), `interrupted` (nobody drives it), or the status as it is */
  state: string;
  /** what to do, for an interrupted run */
  hint: string | null;
}

export function runLiveness(
  run: { runId: string; status: string; leaseOwner: string | null; leaseExpiresAt: string | null },
  now = new Date(),
): Liveness {
  if (run.status !== 'running') return { state: run.status, hint: null };
  const resume = `resumable: run-backfill --resume --run-id ${run.runId}`;
  if (run.leaseOwner === null) return { state: 'interrupted', hint: `no executor holds it; ${resume}` };
  const holder = leaseHolder(run.leaseOwner);
  if (holder.gone) return { state: 'interrupted', hint: `its executor (pid ${holder.pid} on ${holder.host}) is gone; ${resume}` };
  if (run.leaseExpiresAt !== null && Date.parse(run.leaseExpiresAt) <= now.getTime())
    return { state: 'interrupted', hint: `its lease (${holder.host}, pid ${holder.pid}) ran out at ${run.leaseExpiresAt}; ${resume}` };
  return { state: 'running', hint: null };
}
