/**
 * `run-backfill <job> … --operator alice --passphrase-env VAR`: the operator's key is unlocked
 * BEFORE anything runs (a wrong passphrase must not surface after a long run), and the chain
 * head is signed when the run command ends, however it ends — so removing entries of the run
 * from the end of the log later is caught.
 */
import { InputError } from '../../../shared/errors.ts';
import { evidenceRepos } from '../../engine/evidence/repos.ts';
import type { UnlockedIdentity } from '../../engine/evidence/vault.ts';
import type { Store } from '../../engine/store/index.ts';
import type { Reporter } from '../progress.ts';
import { unlockRegistered, type KeyOptions } from './keyring.ts';

export interface RunSigningOptions extends KeyOptions {
  operator?: string;
  runId?: string;
}

export async function unlockOperator(store: Store, opts: RunSigningOptions): Promise<UnlockedIdentity | undefined> {
  if (!opts.passphraseEnv && !opts.keyFile) return undefined;
  if (!opts.operator)
    throw new InputError("--passphrase-env/--key-file sign the run with the operator's key: name the operator with --operator NAME", {
      field: '--operator',
    });
  return unlockRegistered(store, opts.operator, opts);
}

export function checkpointRun(store: Store, signer: UnlockedIdentity | undefined, runId: string | undefined, out: Reporter): void {
  if (!signer) return;
  const cp = evidenceRepos(store).checkpoints.sign(signer, 'run-finished', runId && store.runs.get(runId) ? runId : null);
  if (cp) out.say(`Audit chain head seq ${cp.seq} signed by ${signer.identity.name} (checkpoint #${cp.id}).`);
}
