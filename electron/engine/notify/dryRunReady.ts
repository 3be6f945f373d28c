/**
 * "A dry run is ready for sign-off", told to the notify targets that listen for it — from the
 * CLI's `--dry-run` and the app's impact step alike. Bounded: it waits for delivery at most
 * DRAIN_MS, and a failure is only logged.
 */
import type { Config } from '../../../shared/schemas.ts';
import { evidenceRepos } from '../evidence/repos.ts';
import type { DryRunRow } from '../executor/types.ts';
import type { PreparedPlan } from '../runbook/prepare.ts';
import type { Store } from '../store/index.ts';
import { notifierFor, DRAIN_MS } from './notifier.ts';
import { dryRunReadyMessage } from './runMessages.ts';
import { auditDelivery } from './audit.ts';

export async function notifyDryRunReady(
  o: { config: Config; env: NodeJS.ProcessEnv; store: Store; prepared: PreparedPlan; rows: readonly DryRunRow[]; actor: string },
  log?: (text: string) => void,
): Promise<void> {
  const notifier = notifierFor(o.config, o.env, { log, record: auditDelivery(o.store, o.prepared.plan.request_id, o.actor) });
  if (!notifier) return;
  const leads = evidenceRepos(o.store)
    .identities.list()
    .filter((i) => i.role === 'lead')
    .map((i) => i.name);
  void notifier.send(dryRunReadyMessage(o.prepared, o.rows, leads, o.config.sandbox));
  await notifier.drain(DRAIN_MS);
}
