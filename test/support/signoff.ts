/**
 * A lead's sign-off for CLI tests, done the way users do it: a lead identity (once per
 * workspace), `signoff request`, `sign`, `signoff import`.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SANDBOX_LEAD } from '../../electron/engine/sandbox/sandboxLead.ts';
import { runCli, type CliResult, type Workspace } from './workspace.ts';

export const TEST_PASSPHRASE = 'correct horse battery staple';

/** The sandbox makes its own lead (with its training passphrase) when a scenario loads; every other identity uses the test passphrase. */
function passphraseEnv(ws: Workspace, name: string): string {
  ws.env.BACKFILL_TEST_PASSPHRASE = TEST_PASSPHRASE;
  ws.env.BACKFILL_SANDBOX_LEAD_PASSPHRASE = SANDBOX_LEAD.passphrase;
  return name === SANDBOX_LEAD.name ? 'BACKFILL_SANDBOX_LEAD_PASSPHRASE' : 'BACKFILL_TEST_PASSPHRASE';
}

async function ok(ws: Workspace, args: string[]): Promise<CliResult> {
  const r = await runCli(ws, args);
  if (r.code !== 0) throw new Error(`run-backfill ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r;
}

/** Creates an identity with its key in the workspace's keys/ folder; a no-op if it exists. */
export async function ensureIdentity(ws: Workspace, name: string, role: 'lead' | 'operator'): Promise<void> {
  const env = passphraseEnv(ws, name);
  if (existsSync(join(ws.dir, 'keys', `${name}.key`))) return;
  await ok(ws, ['identity', 'create', '--name', name, '--role', role, '--passphrase-env', env]);
}

/** Writes the sign-off request of a run id's plan (its dry run must be on record) and returns its path. */
export async function requestSignoff(ws: Workspace, runId: string): Promise<string> {
  const file = join(ws.dir, `${runId}.req.json`);
  await ok(ws, ['signoff', 'request', '--run-id', runId, '--out', file]);
  return file;
}

/** Signs a request as `signer` and returns the signature file's path. */
export async function signRequest(ws: Workspace, request: string, signer: string, comment = 'checked the dry run'): Promise<string> {
  const r = await ok(ws, ['sign', request, '--identity', signer, '--passphrase-env', passphraseEnv(ws, signer), '--comment', comment]);
  const file = request.replace(/\.req\.json$/, '') + `.${signer}.sig.json`;
  writeFileSync(file, r.stdout);
  return file;
}

/** The whole round: a lead (default "lead") signs the plan of `runId`, and the signature is imported. */
export async function signOff(ws: Workspace, runId: string, lead = 'lead'): Promise<void> {
  await ensureIdentity(ws, lead, 'lead');
  const signature = await signRequest(ws, await requestSignoff(ws, runId), lead);
  await ok(ws, ['signoff', 'import', signature]);
}
