/** `run-backfill export`, `archive` and `import`. */
import { writeFileSync } from 'node:fs';
import { InputError } from '../../../shared/errors.ts';
import { LIMITS, showBytes } from '../../../shared/limits.ts';
import { buildArchive, importArchive } from '../../engine/evidence/archive.ts';
import { readEvidenceFile, verifyEvidence } from '../../engine/evidence/evidenceFile.ts';
import { exportBundle, type NoteFormat } from '../../engine/evidence/exportNote.ts';
import { renderNote } from '../../engine/evidence/note/render.ts';
import { evidenceRepos } from '../../engine/evidence/repos.ts';
import { registryTrust } from '../../engine/evidence/trust.ts';
import type { UnlockedIdentity } from '../../engine/evidence/vault.ts';
import type { Store } from '../../engine/store/index.ts';
import { EXIT, type ExitCode } from '../exitCodes.ts';
import type { Reporter } from '../progress.ts';
import { notice, writeOutput } from './files.ts';
import { cliActor, unlockRegistered, type KeyOptions } from './keyring.ts';
import { pinnedKeys, VERDICT_EXIT, verificationRecord, verificationText } from './verifyCommand.ts';

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
  const text = renderNote(bundle, opts.format, registryTrust(evidenceRepos(store).identities.list(), store.file, 'exporter'));
  writeOutput(text, opts.out);
  const bytes = Buffer.byteLength(text);
  if (opts.format === 'json' && bytes > LIMITS.bundleBytes)
    notice(`Warning: this bundle is ${showBytes(bytes)}, over the ${showBytes(LIMITS.bundleBytes)} that verify accepts (docs/limits.md).`);
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

export async function importCommand(
  file: string,
  opts: { trust?: string[]; operator?: string },
  store: Store,
  out: Reporter,
): Promise<ExitCode> {
  const evidence = await readEvidenceFile(file, 'run archive');
  if (evidence.kind !== 'archive')
    throw new InputError(`${file} is a note bundle, not a run archive: make one with \`run-backfill archive --run-id ID --out run.bfr\``, {
      file,
    });
  // The same rule as verify, before anything is stored: INTACT against keys this workspace trusts.
  const trust = pinnedKeys(opts.trust) ?? registryTrust(evidenceRepos(store).identities.list(), store.file);
  const verification = verifyEvidence(file, evidence, trust);
  if (!verification.ok) {
    out.record(
      'import',
      { ...verificationRecord(file, verification), imported: false },
      `${verificationText(file, verification)}\nNothing was imported: an archive is imported only when it verifies INTACT.`,
    );
    return VERDICT_EXIT[verification.verdict];
  }
  const { runId, evidence: count } = importArchive(store, evidence.archive, verification, cliActor(opts.operator));
  out.record(
    'import',
    {
      runId,
      evidence: count,
      imported: true,
      verdict: verification.verdict,
      signedHead: verification.signedHead,
      trustedKeys: verification.trustedKeys,
    },
    [
      `Imported run ${runId} from ${file} for review (${count} evidence records); verified INTACT, head signed${verification.signoff.by ? `, signed off by ${verification.signoff.by}` : ''}.`,
      `  trust: ${verification.trustedKeys}`,
      ...verification.notes.map((n) => `  · ${n}`),
      `See it with: run-backfill status --run-id ${runId}`,
    ].join('\n'),
  );
  return EXIT.ok;
}
