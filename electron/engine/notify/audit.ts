/** Each delivery in the audit trail (who was told what, and whether it arrived): `run.notified`. */
import type { Store } from '../store/index.ts';

export function auditDelivery(store: Store, runId: string, actor: string): (detail: Record<string, unknown>) => void {
  return (detail) => {
    try {
      // A dry run's request may not be a run yet: then the entry is the workspace's, not the run's.
      const run = store.runs.get(runId) ? runId : null;
      store.audit.append({ runId: run, entity: 'run', entityId: runId, event: 'run.notified', actor, detail });
    } catch {
      // the ledger closed or full: a notification's trail never fails anything
    }
  };
}
