/**
 * A workspace with one finished, signed manual-tier run for the evidence tests: lead alice
 * signed it, operator bob executed it with his key unlocked (so the chain head is signed), and
 * its note was exported as JSON with bob's checkpoint.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { createOrderMart, seedOrders } from './dataset.ts';
import { createTestDatabase, type TestDatabase } from './pg.ts';
import { ensureIdentity, requestSignoff, signRequest, TEST_PASSPHRASE } from './signoff.ts';
import { makeWorkspace, orderMartJob, pgConfig, runCli, type CliResult, type Workspace } from './workspace.ts';

export const RANGE = ['--from', '2026-05-01', '--to', '2026-05-06'];
/** The evidence tests follow one uninterrupted run: no canary hold (test/integration/canary.test.ts has it). */
export const NO_CANARY = ['--canary', '0'];

export interface SignedRun {
  db: TestDatabase;
  ws: Workspace;
  runId: string;
  /** The exported JSON bundle. */
  bundleFile: string;
  bundle: Record<string, unknown>;
}

export async function cli(ws: Workspace, args: string[], expectCode = 0): Promise<CliResult> {
  const r = await runCli(ws, args);
  if (r.code !== expectCode)
    throw new Error(`run-backfill ${args.join(' ')} exited ${r.code}, expected ${expectCode}:\n${r.stdout}\n${r.stderr}`);
  return r;
}

export async function makeEvidenceWorkspace(prefix: string): Promise<{ db: TestDatabase; ws: Workspace }> {
  const db = await createTestDatabase(inject('pgA'), prefix);
  await seedOrders(db.client, { from: '2026-04-25', days: 20, ordersPerDay: 40, seed: 7 });
  await createOrderMart(db.client);
  const ws = makeWorkspace(prefix, { WAREHOUSE_PASSWORD: db.password, BACKFILL_TEST_PASSPHRASE: TEST_PASSPHRASE });
  ws.writeConfig(pgConfig({ warehouse: { url: db.url, passwordEnv: 'WAREHOUSE_PASSWORD' } }));
  ws.writeJob('order-daily-mart', orderMartJob());
  return { db, ws };
}

export async function signedRun(prefix: string, runId = 'bf-ev-1'): Promise<SignedRun> {
  const { db, ws } = await makeEvidenceWorkspace(prefix);
  await ensureIdentity(ws, 'alice', 'lead');
  await ensureIdentity(ws, 'bob', 'operator');
  await cli(ws, ['order-daily-mart', ...RANGE, ...NO_CANARY, '--run-id', runId, '--reason', 'refund mapping bug', '--dry-run']);
  await cli(ws, [
    'signoff',
    'import',
    await signRequest(ws, await requestSignoff(ws, runId), 'alice', 'impact checked: 5 days of billing data'),
  ]);
  await cli(ws, [
    'order-daily-mart',
    ...RANGE,
    ...NO_CANARY,
    '--run-id',
    runId,
    '--reason',
    'refund mapping bug',
    '--operator',
    'bob',
    '--passphrase-env',
    'BACKFILL_TEST_PASSPHRASE',
  ]);
  const bundleFile = join(ws.dir, `${runId}.json`);
  await cli(ws, [
    'export',
    '--run-id',
    runId,
    '--format',
    'json',
    '--out',
    bundleFile,
    '--identity',
    'bob',
    '--passphrase-env',
    'BACKFILL_TEST_PASSPHRASE',
  ]);
  return { db, ws, runId, bundleFile, bundle: JSON.parse(readFileSync(bundleFile, 'utf8')) as Record<string, unknown> };
}
