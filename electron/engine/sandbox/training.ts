/**
 * Training on the sandbox, for the command line and the app alike: list the scenarios, load
 * one (the warehouse and the lake put back to their generated state, then the defect
 * injected; recorded in the ledger), and check its definition of "fixed" against what the
 * trainee did since it was loaded.
 */
import type { SandboxLeadView, ScenarioView } from '../../../shared/contractTypes.ts';
import { InputError } from '../../../shared/errors.ts';
import type { Config } from '../../../shared/schemas.ts';
import type { Store } from '../store/index.ts';
import { ensureSandboxLead } from './sandboxLead.ts';
import { openPg, type PgClient } from '../targets/postgres/connect.ts';
import { openBucket } from '../targets/s3/open.ts';
import type { S3Bucket } from '../targets/s3/bucket.ts';
import { SCENARIOS, loadScenario, scenario, type ScenarioCheck, type ScenarioEnv } from './scenarios.ts';

/** A scenario as listed: everything but its inject and check. */
export type ScenarioSummary = ScenarioView;

export interface ScenarioLoaded extends ScenarioSummary {
  loadedAt: string;
  /** the Sandbox's lead, made on first load, so the manual tier's sign-off can be practised */
  lead: SandboxLeadView;
}

export interface ScenarioVerdict {
  scenario: ScenarioSummary;
  ok: boolean;
  checks: ScenarioCheck[];
  loadedAt: string;
}

export interface TrainingOptions {
  /** the sandbox's config (connections `warehouse` and, when it has one, `lake`) */
  config: Config;
  store: Store;
  id: number;
  env?: NodeJS.ProcessEnv;
  /** who loads it (audited when the sandbox lead is registered) */
  actor?: string;
}

const LOADED = 'scenario-loaded';

export function listScenarios(): ScenarioSummary[] {
  return SCENARIOS.map(summary);
}

/** Resets the sandbox's data, injects the scenario's defect, and records when it was loaded. */
export async function loadTrainingScenario(opts: TrainingOptions): Promise<ScenarioLoaded> {
  const env = await openEnv(opts);
  try {
    const sc = await loadScenario(env, requireScenario(opts.id).id);
    const record = opts.store.evidence.add({ runId: null, planHash: null, kind: LOADED, body: { id: sc.id, slug: sc.slug } });
    const lead = ensureSandboxLead({ store: opts.store, env: opts.env ?? process.env, actor: opts.actor ?? 'sandbox' });
    return { ...summary(sc), loadedAt: record.createdAt, lead };
  } finally {
    await closeEnv(env);
  }
}

/** The scenario loaded last in this ledger, if any. */
export function currentScenario(store: Store): { id: number; loadedAt: string } | null {
  const last = store.evidence.list({ kind: LOADED }).at(-1);
  const id = (last?.body as { id?: unknown } | undefined)?.id;
  return last && typeof id === 'number' ? { id, loadedAt: last.createdAt } : null;
}

/** The scenario's own checks, counting only what happened since it was last loaded. */
export async function checkTrainingScenario(opts: TrainingOptions): Promise<ScenarioVerdict> {
  const sc = requireScenario(opts.id);
  const loaded = opts.store.evidence
    .list({ kind: LOADED })
    .filter((e) => (e.body as { id?: number }).id === sc.id)
    .at(-1);
  if (!loaded)
    throw new InputError(`scenario ${sc.id} was never loaded here: load it first (run-backfill sandbox load ${sc.id})`, {
      field: 'scenario',
      value: sc.id,
    });
  const env = await openEnv(opts);
  try {
    const checks = await sc.check({ ...env, store: opts.store, since: loaded.createdAt });
    return { scenario: summary(sc), ok: checks.every((c) => c.ok), checks, loadedAt: loaded.createdAt };
  } finally {
    await closeEnv(env);
  }
}

function requireScenario(id: number) {
  if (!Number.isInteger(id))
    throw new InputError(`scenario ${JSON.stringify(id)} is not a number: choose one of ${SCENARIOS.map((s) => s.id).join(', ')}`, {
      field: 'scenario',
      value: id,
    });
  try {
    return scenario(id);
  } catch (err) {
    throw new InputError((err as Error).message, { field: 'scenario', value: id });
  }
}

function summary(sc: ScenarioSummary): ScenarioSummary {
  const { id, slug, title, story, job, range, steps, fixed, unavailable } = sc;
  return { id, slug, title, story, job, range: { ...range }, steps: [...steps], fixed, ...(unavailable ? { unavailable } : {}) };
}

async function openEnv(opts: TrainingOptions): Promise<ScenarioEnv> {
  if (!opts.config.sandbox)
    throw new InputError('training scenarios only load into the Sandbox workspace: they reset its data', {
      field: 'sandbox',
      value: opts.config.sandbox,
    });
  const warehouse = opts.config.connections.warehouse;
  if (warehouse?.kind !== 'postgres')
    throw new InputError('the sandbox config has no warehouse (PostgreSQL) connection', { field: 'connections.warehouse' });
  const client: PgClient = await openPg({
    url: warehouse.url,
    statementTimeoutMs: 120_000,
    lockTimeoutMs: 60_000,
    connectTimeoutMs: 10_000,
    applicationName: 'backfill-runbook:sandbox',
  });
  const lake: S3Bucket | null =
    opts.config.connections.lake?.kind === 's3' ? openBucket(opts.config, 'lake', 'connections.lake', opts.env ?? process.env) : null;
  return { client, lake };
}

async function closeEnv(env: ScenarioEnv): Promise<void> {
  env.lake?.client.destroy();
  await env.client.end();
}
