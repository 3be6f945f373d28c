/**
 * `run-backfill verify [FILE] [--trust KEY.pem …]`: a note bundle or a run archive when FILE is
 * given (no database needed), else the local database named by --db. Exit 0 intact, 1 broken.
 */
import { readFileSync } from 'node:fs';
import { InputError } from '../../../shared/errors.ts';
import { isArchive, ledgerProblems, readArchive } from '../../engine/evidence/archive.ts';
import type { SignerKey } from '../../engine/evidence/checkpointCheck.ts';
import { fingerprint, parsePublicKey, publicKeyPem, shortFingerprint } from '../../engine/evidence/keys.ts';
import { verifyBundle, type BundleVerification } from '../../engine/evidence/verifyBundle.ts';
import { verifyDatabase } from '../../engine/evidence/verifyDb.ts';
import { EXIT, type ExitCode } from '../exitCodes.ts';
import type { Reporter } from '../progress.ts';
import { table } from '../tables.ts';
import { readInput } from './files.ts';

export function trustedKeys(files: readonly string[] = []): SignerKey[] {
  return files.map((file) => {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new InputError(`cannot read the trusted key ${file}: ${(err as Error).message}`, { file, field: '--trust' });
    }
    const key = parsePublicKey(text, file);
    return { name: file, role: 'trusted', fingerprint: fingerprint(key), publicKeyPem: publicKeyPem(key) };
  });
}

/** A bundle (JSON) or an archive (.bfr), verified; archives also check their ledger rows. */
export function verifyFile(file: string, trust: readonly string[]): BundleVerification {
  const data = readInput(file, 'file to verify');
  const trusted = trustedKeys(trust);
  if (isArchive(data)) {
    const archive = readArchive(data, file);
    const result = verifyBundle(archive.bundle, { trusted });
    const ledger = ledgerProblems(archive);
    return { ...result, ok: result.ok && ledger.length === 0, problems: [...result.problems, ...ledger] };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(data.toString('utf8'));
  } catch (err) {
    throw new InputError(`${file} is neither a note bundle (JSON) nor a run archive: ${err instanceof Error ? err.message : String(err)}`, {
      file,
    });
  }
  return verifyBundle(parsed, { trusted });
}

/** The local database, read-only; `db` is the file the CLI resolved (--db, the config's ledger, or the app's). */
export function verifyDbCommand(db: string, out: Reporter): ExitCode {
  const r = verifyDatabase(db);
  const head = r.chain.head ? `${r.chain.count} entries, head seq ${r.chain.head.seq} ${r.chain.head.hash}` : 'empty audit log';
  const signed = r.checkpoints
    .filter((c) => c.signed)
    .map(
      (c) => `seq ${c.checkpoint.seq} by ${c.checkpoint.signer} (key ${shortFingerprint(c.checkpoint.signerKey)}) at ${c.checkpoint.at}`,
    );
  out.record(
    'verify',
    { file: db, ok: r.ok, problems: r.problems, notes: r.notes, head: r.chain.head, firstBrokenSeq: r.chain.broken?.seq ?? null },
    [
      `${r.ok ? 'INTACT' : 'BROKEN'}: ${db} — ${head}`,
      ...r.problems.map((p) => `  ✘ ${p}`),
      ...signed.map((s) => `  ✔ signed checkpoint: ${s}`),
      ...r.notes.map((n) => `  · ${n}`),
    ].join('\n'),
  );
  return r.ok ? EXIT.ok : EXIT.failed;
}

export function verifyCommand(file: string, opts: { trust?: string[] }, out: Reporter): ExitCode {
  const r = verifyFile(file, opts.trust ?? []);
  const head = r.chain?.head ? `audit seq ${r.chain.firstSeq}–${r.chain.head.seq}, head ${r.chain.head.hash}` : 'no audit entries';
  out.record(
    'verify',
    { file, ok: r.ok, signedHead: r.signedHead, trust: r.trust, problems: r.problems, notes: r.notes, signatures: r.signatures },
    [
      `${r.ok ? 'INTACT' : 'BROKEN'}: ${file} — ${head}${r.ok ? (r.signedHead ? ', head signed' : ', head NOT signed') : ''}`,
      ...r.problems.map((p) => `  ✘ ${p}`),
      ...(r.signatures.length > 0
        ? [
            table(
              ['what', 'signer', 'role', 'key', 'at', 'verified'],
              r.signatures.map((s) => [
                s.what,
                s.signer,
                s.role ?? 'not registered',
                shortFingerprint(s.fingerprint),
                s.at,
                s.valid ? 'yes' : 'NO',
              ]),
            ),
          ]
        : ['  no signatures']),
      ...r.notes.map((n) => `  · ${n}`),
    ].join('\n'),
  );
  return r.ok ? EXIT.ok : EXIT.failed;
}
