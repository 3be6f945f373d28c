/**
 * `run-backfill verify [FILE] [--trust KEY.pem …]`: a note bundle or a run archive when FILE is
 * given (its own database not needed), else the local database named by --db.
 *
 * Whose keys count: the --trust files when given, else the identities registered in this
 * workspace's ledger — never the keys inside the file. Exit codes (README, "verify's verdicts"):
 * 0 INTACT · 1 BROKEN · 4 UNTRUSTED or NOT SIGNED OFF · 2 the file (or a --trust key) cannot be
 * read, is not a bundle or archive, or is over a size limit.
 */
import { InputError } from '../../../shared/errors.ts';
import { LIMITS } from '../../../shared/limits.ts';
import { readEvidenceFile, verifyEvidence } from '../../engine/evidence/evidenceFile.ts';
import { shortFingerprint } from '../../engine/evidence/keys.ts';
import { pinnedTrust, readRegistryTrust, type Trust } from '../../engine/evidence/trust.ts';
import { VERDICT_WORD, type Verdict } from '../../engine/evidence/verdict.ts';
import type { BundleVerification } from '../../engine/evidence/verifyBundle.ts';
import { verifyDatabase } from '../../engine/evidence/verifyDb.ts';
import { readBoundedText } from '../../engine/input/boundedFile.ts';
import { EXIT, type ExitCode } from '../exitCodes.ts';
import type { Reporter } from '../progress.ts';
import { table } from '../tables.ts';

export const VERDICT_EXIT: Record<Verdict, ExitCode> = {
  intact: EXIT.ok,
  broken: EXIT.failed,
  untrusted: EXIT.refused,
  'not-signed-off': EXIT.refused,
};

/** The keys of --trust files; undefined when none was given. */
export function pinnedKeys(files: readonly string[] = []): Trust | undefined {
  if (files.length === 0) return undefined;
  return pinnedTrust(
    files.map((file) => {
      try {
        return { file, pem: readBoundedText(file, { what: 'trusted key', field: '--trust', limit: LIMITS.publicKeyBytes }) };
      } catch (err) {
        if (err instanceof InputError) throw err;
        throw new InputError(`cannot read the trusted key ${file}: ${(err as Error).message}`, { file, field: '--trust' });
      }
    }),
  );
}

/** A bundle (JSON) or an archive (.bfr), verified against --trust keys or the identities registered in `ledger`. */
export async function verifyFile(file: string, trust: readonly string[], ledger: () => string): Promise<BundleVerification> {
  const keys = pinnedKeys(trust) ?? readRegistryTrust(ledger());
  return verifyEvidence(file, await readEvidenceFile(file), keys);
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

export async function verifyCommand(file: string, opts: { trust?: string[] }, ledger: () => string, out: Reporter): Promise<ExitCode> {
  const r = await verifyFile(file, opts.trust ?? [], ledger);
  out.record('verify', verificationRecord(file, r), verificationText(file, r));
  return VERDICT_EXIT[r.verdict];
}

export function verificationRecord(file: string, r: BundleVerification): Record<string, unknown> {
  const { verdict, ok, signedHead, trust, trustedKeys, problems, broken, untrusted, signoff, notes, signatures } = r;
  return { file, verdict, ok, signedHead, trust, trustedKeys, problems, broken, untrusted, signoff, notes, signatures };
}

/** The report verify prints, and import prints when it refuses. */
export function verificationText(file: string, r: BundleVerification): string {
  const head = r.chain?.head ? `audit seq ${r.chain.firstSeq}–${r.chain.head.seq}, head ${r.chain.head.hash}` : 'no audit entries';
  const headSigner = r.signatures.find((s) => s.valid && s.what.startsWith(`checkpoint of the chain head at seq ${r.chain?.head?.seq}`));
  const facts = [
    r.signedHead ? `head signed by ${headSigner?.signer ?? '?'}` : 'head NOT signed by a trusted key',
    r.signoff.by ? `signed off by ${r.signoff.by}` : r.signoff.required ? 'NO sign-off that counts (manual tier)' : undefined,
  ].filter(Boolean);
  return [
    `${VERDICT_WORD[r.verdict]}: ${file} — ${head}${r.broken.length === 0 ? `, ${facts.join('; ')}` : ''}`,
    `  trust: ${r.trustedKeys}`,
    ...r.problems.map((p) => `  ✘ ${p}`),
    ...(r.signatures.length > 0
      ? [
          table(
            ['what', 'signer', 'role', 'key', 'at', 'verified'],
            r.signatures.map((s) => [
              s.what,
              s.signer,
              s.role ?? (s.valid ? '–' : 'not trusted'),
              shortFingerprint(s.fingerprint),
              s.at,
              s.valid ? 'yes' : 'NO',
            ]),
          ),
        ]
      : ['  no signatures']),
    ...r.notes.map((n) => `  · ${n}`),
  ].join('\n');
}
