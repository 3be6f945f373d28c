/**
 * `run-backfill verify note.json`: checks a bundle with no database of its own, in three parts
 * that the verdict (verdict.ts) weighs:
 *
 *   integrity  the chain links, its last entry (note.exported) carries the manifest's hash, and
 *              every item matches the manifest — what changed, precisely, if anything did;
 *   trust      every signature verifies against a key the verifier trusts (trust.ts: --trust
 *              files or its own registered identities, never the keys inside the bundle), and
 *              one of them covers the chain head itself;
 *   sign-off   a manual-tier run carries a sign-off that counts, by the gate's own rules.
 *
 * Only the first part knows how the audit entries hang together; the other two rely on the
 * head alone, so a bundle that carries only its own run's segment of the chain changes the
 * first part, not what a verdict means.
 */
import { bundleSchema, type NoteBundle, type SectionName } from './bundle.ts';
import { checkSignoffSignatures, signoffFinding, type SignatureSummary } from './bundleSignoffs.ts';
import type { ChainedEntry } from './chain.ts';
import { checkCheckpoints } from './checkpointCheck.ts';
import { fingerprint, shortFingerprint } from './keys.ts';
import { manifestHash } from './manifest.ts';
import { carriedKey, describeTrust, rekeyedIdentities, resolveSigner, type Trust, type TrustSource } from './trust.ts';
import { decideVerdict, type SignoffFinding, type Verdict } from './verdict.ts';
import { verifyChain, type ChainReport } from './verifyChain.ts';
import { compareSections, explainAuditEdit } from './verifySections.ts';

export type { SignatureSummary } from './bundleSignoffs.ts';

export interface BundleVerification {
  verdict: Verdict;
  /** verdict === 'intact' */
  ok: boolean;
  /** The chain's head is covered by a valid checkpoint signed by a trusted key. */
  signedHead: boolean;
  trust: TrustSource;
  /** Where trust came from, in words: "keys pinned with --trust: …" or "identities registered in …". */
  trustedKeys: string;
  chain: ChainReport | null;
  /** Every problem, the worst first: broken, then untrusted, then sign-off. */
  problems: string[];
  broken: string[];
  untrusted: string[];
  signoff: SignoffFinding;
  notes: string[];
  signatures: SignatureSummary[];
}

/**
 * Structure first: a bundle that is not one throws nothing here — it returns BROKEN naming the
 * field — so every caller gets a verdict. Callers reading files refuse it earlier (evidenceFile.ts).
 */
export function verifyBundle(data: unknown, trust: Trust): BundleVerification {
  const parsed = bundleSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return report(trust, null, {
      broken: [`not a valid incident-note bundle: field ${issue?.path.join('.') ?? ''}: ${issue?.message ?? ''}`],
      untrusted: [],
      headSigned: false,
      signoff: { required: false, by: null, problems: [] },
      notes: [],
      signatures: [],
    });
  }
  const bundle = parsed.data as unknown as NoteBundle;
  const broken: string[] = [];
  const untrusted: string[] = [];
  const chain = verifyChain(bundle.audit, {
    fromGenesis: false,
    explainEdit: (e) => explainAuditEdit(bundle.manifest, e),
    leftOut: leftOutBy(bundle.audit.at(-1)),
  });
  if (chain.broken) broken.push(chain.broken.message);
  const head = bundle.audit.at(-1);
  broken.push(...headProblems(bundle, head));
  broken.push(
    ...compareSections(
      bundle.manifest,
      { ...(bundle as unknown as Record<SectionName, object[]>), audit: bundle.audit.slice(0, -1) },
      chain.broken ? ['audit'] : [],
    ),
  );
  broken.push(...identityProblems(bundle));
  untrusted.push(...rekeyedIdentities(trust, bundle.identities));

  const signatures: SignatureSummary[] = [];
  for (const check of checkSignoffSignatures(bundle, trust)) {
    broken.push(...check.broken);
    untrusted.push(...check.untrusted);
    signatures.push(check.summary);
  }
  const findings = checkCheckpoints(
    bundle.checkpoints,
    new Map(bundle.audit.map((e) => [e.seq, e])),
    { firstSeq: chain.firstSeq, lastSeq: chain.head?.seq ?? null },
    {
      judge: (what, signer, signerKey) => {
        const resolved = resolveSigner(trust, bundle.identities, signer, signerKey);
        return 'key' in resolved
          ? { key: resolved.key }
          : { problem: `${what} is signed with key ${shortFingerprint(signerKey)}: ${resolved.problem}` };
      },
      carried: (fp) => carriedKey(bundle.identities, [], fp),
    },
  );
  for (const f of findings) {
    broken.push(...f.problems);
    untrusted.push(...f.untrusted);
    const resolved = resolveSigner(trust, bundle.identities, f.checkpoint.signer, f.checkpoint.signerKey);
    signatures.push({
      what: `checkpoint of the chain head at seq ${f.checkpoint.seq}`,
      signer: f.checkpoint.signer,
      role: 'key' in resolved ? resolved.key.role : null,
      fingerprint: f.checkpoint.signerKey,
      at: f.checkpoint.at,
      valid: f.signed,
    });
  }
  for (const e of bundle.audit.filter((x) => x.event === 'audit.checkpoint')) {
    if (!bundle.checkpoints.some((c) => String(c.id) === e.entityId))
      broken.push(`checkpoint #${e.entityId} recorded at audit seq ${e.seq} is missing from checkpoints[]: it was removed`);
  }

  const headSigned =
    head !== undefined &&
    head.event === 'note.exported' &&
    findings.some((f) => f.signed && f.checkpoint.seq === head.seq && f.checkpoint.hash === head.hash);
  if (head && !headSigned) untrusted.push(unsignedHead(head, findings.filter((f) => f.checkpoint.seq === head.seq).length > 0, trust));
  return report(trust, chain, { broken, untrusted, headSigned, signoff: signoffFinding(bundle, trust), notes: [], signatures });
}

function report(
  trust: Trust,
  chain: ChainReport | null,
  f: {
    broken: string[];
    untrusted: string[];
    headSigned: boolean;
    signoff: SignoffFinding;
    notes: string[];
    signatures: SignatureSummary[];
  },
): BundleVerification {
  const verdict = decideVerdict(f);
  const notes = [...f.notes];
  if (trust.keys.length === 0)
    notes.push(
      trust.source === 'pinned'
        ? 'no key was pinned'
        : `no identities are registered in ${trust.where}: pin the signers' public keys with --trust KEY.pem, or register them here (run-backfill identity register)`,
    );
  return {
    verdict,
    ok: verdict === 'intact',
    signedHead: f.headSigned,
    trust: trust.source,
    trustedKeys: describeTrust(trust),
    chain,
    problems: [...f.broken, ...f.untrusted, ...f.signoff.problems],
    broken: f.broken,
    untrusted: f.untrusted,
    signoff: f.signoff,
    notes,
    signatures: f.signatures,
  };
}

/**
 * The seqs a segment leaves out, as its note.exported entry declares them (`auditRanges`: the
 * ones it holds): every seq from its first to its head that is in none of the ranges. A bundle
 * exported before segments were (a contiguous slice) declares none, and leaves nothing out.
 * Trusting the declaration is safe: it is part of the head's hash, which the signed checkpoint covers.
 */
function leftOutBy(head: ChainedEntry | undefined): ((seq: number) => boolean) | undefined {
  const ranges = head?.event === 'note.exported' ? head.detail.auditRanges : undefined;
  if (!Array.isArray(ranges) || head === undefined) return undefined;
  const held = ranges.filter((r): r is [number, number] => Array.isArray(r) && r.length === 2 && r.every((n) => Number.isInteger(n)));
  const first = held[0]?.[0];
  return (seq) => first !== undefined && seq > first && seq < head.seq && !held.some(([from, to]) => seq >= from && seq <= to);
}

function unsignedHead(head: ChainedEntry, covered: boolean, trust: Trust): string {
  const what = `the chain head (seq ${head.seq}, ${head.event})`;
  if (covered) return `${what} is covered only by checkpoints that do not verify against a trusted key: nothing vouches for the chain`;
  return `${what} is not signed by any key — ${trust.source === 'pinned' ? 'pinned or not' : 'registered or not'}: a bundle rebuilt from scratch, every hash recomputed, would look exactly like this one (export with --identity NAME to sign the head)`;
}

/** The last entry is the export itself, and the header, manifest and slice agree with it. */
function headProblems(bundle: NoteBundle, last: ChainedEntry | undefined): string[] {
  if (!last || last.event !== 'note.exported')
    return [
      `the audit slice ends at ${last ? `seq ${last.seq} (${last.event})` : 'nothing'}, not at its note.exported entry: entries were removed from its end (truncated)`,
    ];
  const problems: string[] = [];
  const recorded = last.detail.manifestSha256;
  const actual = manifestHash(bundle.manifest);
  if (recorded !== actual)
    problems.push(
      `the manifest was changed after export: it hashes to ${actual.slice(0, 12)}…, but the note.exported entry (seq ${last.seq}) recorded ${String(recorded).slice(0, 12)}…`,
    );
  const from = last.detail.auditFrom;
  const first = bundle.audit[0];
  if (typeof from === 'number' && first && first.seq > from)
    problems.push(
      `the audit slice starts at seq ${first.seq}, but the note was exported from seq ${from}: seq ${from}–${first.seq - 1} were removed from its start`,
    );
  if (last.runId !== bundle.runId)
    problems.push(`runId "${bundle.runId}" is not the run of the note.exported entry ("${String(last.runId)}")`);
  if (last.at !== bundle.exportedAt || last.actor !== bundle.exportedBy)
    problems.push(
      `exportedAt/exportedBy (${bundle.exportedAt}, ${bundle.exportedBy}) differ from the note.exported entry (${last.at}, ${last.actor})`,
    );
  return problems;
}

function keyFingerprint(pem: string): string | undefined {
  try {
    return fingerprint(pem);
  } catch {
    return undefined;
  }
}

function identityProblems(bundle: NoteBundle): string[] {
  const problems: string[] = [];
  for (const identity of bundle.identities) {
    if (keyFingerprint(identity.publicKeyPem) !== identity.fingerprint)
      problems.push(
        `identity ${identity.name}: its public key does not hash to its fingerprint ${shortFingerprint(identity.fingerprint)}: the key was replaced`,
      );
  }
  for (const e of bundle.audit.filter((x) => x.event === 'identity.registered')) {
    const identity = bundle.identities.find((i) => i.name === e.entityId);
    if (identity && identity.fingerprint !== e.detail.fingerprint)
      problems.push(
        `identity ${identity.name} carries key ${shortFingerprint(identity.fingerprint)}, but audit seq ${e.seq} registered key ${shortFingerprint(String(e.detail.fingerprint))}`,
      );
  }
  return problems;
}
