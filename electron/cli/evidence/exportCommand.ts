/** `run-backfill export`, `archive` and `import`. */
import { writeFileSync } from 'node:fs';
import { InputError } from '../../../shared/errors.ts';
import { buildArchive, importArchive, readArchive } from '../../engine/evidence/archive.ts';
import { exportBundle, type NoteFormat } from '../../engine/evidence/exportNote.ts';
import { renderNote } from '../../engine/evidence/note/render.ts';
import type { UnlockedIdentity } from '../../engine/evidence/vault.ts';
import type { Store } from '../../engine/store/index.ts';
import { EXIT, type ExitCode } from '../exitCodes.ts';
import type { Reporter } from '../progress.ts';
import { notice, readInput, writeOutput } from './files.ts';
import { cliActor, unlockRegistered, type KeyOptions } from './keyring.ts';
import { verifyFile } from './verifyCommand.ts';

export interface ExportOptions extends KeyOptions {
  runId: string;
  format: NoteFormat;
  out?: string;
  identity?: string;
  operator?: string;
}

async function signerOf(opts: ExportOptions, store: Store): Promise<UnlockedIdentity | undefined> {
  if (!opts.identity) {
    if (opts.passphraseEnv || opts.keyFile)
      throw new InputError('--passphrase-env/--key-file need --identity NAME: whose key signs the checkpoint', { field: '--identity' });
    return undefined;
  }
  return unlockRegistered(store, opts.identity, opts);
}

export async function exportCommand(opts: ExportOptions, store: Store): Promise<ExitCode> {
  const signer = await signerOf(opts, store);
  const bundle = exportBundle(store, opts.runId, { format: opts.format, actor: opts.identity ?? cliActor(opts.operator), signer });
  writeOutput(renderNote(bundle, opts.format), opts.out);
  notice(
    `Incident note of ${opts.runId} (${opts.format}) ${opts.out ? `written to ${opts.out}` : 'written'}; chain head seq ${bundle.audit.at(-1)?.seq ?? '?'}${signer ? `, signed by ${signer.identity.name}` : ', not signed (add --identity to sign the head)'}.`,
  );
  return EXIT.ok;
}

export async function archiveCommand(
  opts: Omit<ExportOptions, 'format'> & { out: string },
  store: Store,
  out: Reporter,
): Promise<ExitCode> {
  const signer = await signerOf({ ...opts, format: 'json' }, store);
  const bundle = exportBundle(store, opts.runId, { format: 'archive', actor: opts.identity ?? cliActor(opts.operator), signer });
  const data = buildArchive(store, bundle);
  writeFileSync(opts.out, data);
  out.record(
    'archive',
    { runId: opts.runId, file: opts.out, bytes: data.length },
    `Archived run ${opts.runId} to ${opts.out} (${data.length} bytes): bundle, evidence, signatures and ledger rows.`,
  );
  return EXIT.ok;
}

export function importCommand(file: string, opts: { trust?: string[]; operator?: string }, store: Store, out: Reporter): ExitCode {
  const verification = verifyFile(file, opts.trust ?? []);
  if (!verification.ok) {
    throw new InputError(`${file} did not verify, so nothing was imported:\n${verification.problems.map((p) => `  - ${p}`).join('\n')}`, {
      file,
    });
  }
  const archive = readArchive(readInput(file, 'run archive'), file);
  const { runId, evidence } = importArchive(store, archive, verification, cliActor(opts.operator));
  out.record(
    'import',
    { runId, evidence, signedHead: verification.signedHead },
    [
      `Imported run ${runId} from ${file} for review (${evidence} evidence records); verified intact${verification.signedHead ? ', head signed' : ', head NOT signed'}.`,
      ...verification.notes.map((n) => `  · ${n}`),
      `See it with: run-backfill status --run-id ${runId}`,
    ].join('\n'),
  );
  return EXIT.ok;
}
