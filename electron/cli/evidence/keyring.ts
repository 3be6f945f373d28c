/**
 * How the CLI reaches private keys: the FileKeyVault in `$BACKFILL_RUNBOOK_KEYS`, or `keys/`
 * beside the local database (so the app's folder by default, and a test's own folder in tests),
 * or one `--key-file`; the passphrase from `--passphrase-env VAR` or a prompt on the terminal.
 */
import { existsSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { InputError } from '../../../shared/errors.ts';
import { createFileKeyVault } from '../../engine/evidence/fileVault.ts';
import { readKeyFile } from '../../engine/evidence/fileVault.ts';
import { evidenceRepos } from '../../engine/evidence/repos.ts';
import { shortFingerprint } from '../../engine/evidence/keys.ts';
import type { KeyVault, UnlockedIdentity } from '../../engine/evidence/vault.ts';
import { loadConfig } from '../../engine/plan/load.ts';
import type { Store } from '../../engine/store/index.ts';
import { defaultDbPath } from '../paths.ts';
import { resolveWorkspace, type GlobalOptions } from '../program.ts';

export interface KeyOptions {
  keyFile?: string;
  passphraseEnv?: string;
}

export function keysDir(db: string, env: NodeJS.ProcessEnv = process.env): string {
  return env.BACKFILL_RUNBOOK_KEYS ?? join(dirname(resolve(db)), 'keys');
}

/** The ledger a command would open (as main.ts resolves it), for commands that open none. */
export function ledgerPath(g: GlobalOptions): string {
  resolveWorkspace(g);
  if (g.db) return g.db;
  if (g.config && existsSync(g.config)) {
    const { ledger } = loadConfig(g.config);
    if (ledger) return resolve(dirname(g.config), ledger);
  }
  return defaultDbPath();
}

/** Who is acting: --operator, or the OS user at this host (as the run command records it). */
export function cliActor(operator?: string): string {
  if (operator) return operator;
  try {
    return `${userInfo().username}@${hostname()}`;
  } catch {
    return `unknown@${hostname()}`;
  }
}

export async function passphrase(opts: KeyOptions, purpose: string, confirm = false): Promise<string> {
  if (opts.passphraseEnv) {
    const value = process.env[opts.passphraseEnv];
    if (value === undefined) {
      throw new InputError(`--passphrase-env names ${opts.passphraseEnv}, which is not set`, {
        field: '--passphrase-env',
        value: opts.passphraseEnv,
      });
    }
    return value;
  }
  if (!process.stdin.isTTY) {
    throw new InputError(
      `a passphrase is needed to ${purpose}: pass --passphrase-env VAR (the name of an environment variable holding it), or run in a terminal`,
      {
        field: '--passphrase-env',
      },
    );
  }
  const first = await prompt(`Passphrase to ${purpose}: `);
  if (confirm && (await prompt('Repeat the passphrase: ')) !== first)
    throw new InputError('the two passphrases differ', { field: 'passphrase' });
  return first;
}

export function vaultFor(db: string, opts: KeyOptions, secret: string): KeyVault {
  return createFileKeyVault({ dir: keysDir(db), file: opts.keyFile, passphrase: () => secret });
}

/** The identity named by --identity, or the one in --key-file. */
export function identityName(identity: string | undefined, opts: KeyOptions): string {
  if (identity) return identity;
  if (opts.keyFile) return readKeyFile(opts.keyFile).name;
  throw new InputError('name the signer with --identity NAME (or --key-file FILE)', { field: '--identity' });
}

/** Unlocks a signer's key and insists it is the key registered under that name in this workspace. */
export async function unlockRegistered(store: Store, name: string, opts: KeyOptions): Promise<UnlockedIdentity> {
  const registered = evidenceRepos(store).identities.get(name);
  if (!registered) {
    throw new InputError(
      `${name} is not a registered identity in ${store.file}: create one with \`run-backfill identity create --name ${name} --role operator\``,
      { field: '--identity', value: name },
    );
  }
  const unlocked = vaultFor(store.file, opts, await passphrase(opts, `unlock ${name}'s key`)).unlock(name);
  if (unlocked.identity.fingerprint !== registered.fingerprint) {
    throw new InputError(
      `the key of ${name} here (${shortFingerprint(unlocked.identity.fingerprint)}) is not the one registered in ${store.file} (${shortFingerprint(registered.fingerprint)})`,
      {
        field: '--identity',
        value: name,
      },
    );
  }
  return unlocked;
}

/** Reads a line from the terminal without echoing it. */
function prompt(question: string): Promise<string> {
  return new Promise((resolvePrompt, reject) => {
    const stdin = process.stdin;
    process.stderr.write(question);
    let text = '';
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding('utf8');
    const done = (err?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      process.stderr.write('\n');
      if (err) reject(err);
      else resolvePrompt(text);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return done();
        if (ch === '\u0003') return done(new InputError('cancelled'));
        if (ch === '\u007f' || ch === '\b') text = text.slice(0, -1);
        else text += ch;
      }
    };
    stdin.on('data', onData);
  });
}
