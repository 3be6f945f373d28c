/**
 * `run-backfill verify note.json`: checks a bundle with no database. The chain must link;
 * its last entry (note.exported) must carry the manifest's hash; every item must match the
 * manifest; every signature must verify against the signer's key — from the bundle, or only
 * the keys pinned with --trust. Reports each problem precisely, and who signed what.
 */
import { canonicalJson } from '../../../shared/canonicalJson.ts';
import { bundleSchema, type NoteBundle, type SectionName } from './bundle.ts';
import { sha256Hex, type ChainedEntry } from './chain.ts';
import { checkCheckpoints, signerProblem, type KeyLookup, type SignerKey } from './checkpointCheck.ts';
import { fingerprint, shortFingerprint, verifyText } from './keys.ts';
import { manifestHash } from './manifest.ts';
import { verifyChain, type ChainReport } from './verifyChain.ts';
import { compareSections, explainAuditEdit } from './verifySections.ts';

export interface SignatureSummary {
  what: string;
  signer: string;
  role: string | null;
  fingerprint: string;
  at: string;
  valid: boolean;
}

export interface BundleVerification {
  ok: boolean;
  /** The chain's head is covered by a valid checkpoint signed by a known (or pinned) key. */
  signedHead: boolean;
  trust: 'pinned' | 'bundle';
  chain: ChainReport | null;
  problems: string[];
  notes: string[];
  signatures: SignatureSummary[];
}

export function verifyBundle(data: unknown, options: { trusted?: readonly SignerKey[] } = {}): BundleVerification {
  const pinned = options.trusted !== undefined && options.trusted.length > 0;
  const result: BundleVerification = {
    ok: false,
    signedHead: false,
    trust: pinned ? 'pinned' : 'bundle',
    chain: null,
    problems: [],
    notes: [],
    signatures: [],
  };
  const parsed = bundleSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    result.problems.push(`not a valid incident-note bundle: field ${issue?.path.join('.') ?? ''} ${issue?.message ?? ''}`);
    return result;
  }
  const bundle = parsed.data as unknown as NoteBundle;
  const { problems, notes } = result;

  const chain = verifyChain(bundle.audit, { fromGenesis: false, explainEdit: (e) => explainAuditEdit(bundle.manifest, e) });
  result.chain = chain;
  if (chain.broken) problems.push(chain.broken.message);

  const last = bundle.audit.at(-1);
  const covered = bundle.audit.slice(0, -1);
  if (!last || last.event !== 'note.exported') {
    problems.push(
      `the audit slice ends at ${last ? `seq ${last.seq} (${last.event})` : 'nothing'}, not at its note.exported entry: entries were removed from its end (truncated)`,
    );
  } else {
    const recorded = last.detail.manifestSha256;
    const actual = manifestHash(bundle.manifest);
    if (recorded !== actual)
      problems.push(
        `the manifest was changed after export: it hashes to ${actual.slice(0, 12)}…, but the note.exported entry (seq ${last.seq}) recorded ${String(recorded).slice(0, 12)}…`,
      );
    const from = last.detail.auditFrom;
    if (typeof from === 'number' && bundle.audit[0] && bundle.audit[0].seq > from) {
      problems.push(
        `the audit slice starts at seq ${bundle.audit[0].seq}, but the note was exported from seq ${from}: seq ${from}–${bundle.audit[0].seq - 1} were removed from its start`,
      );
    }
    if (last.runId !== bundle.runId)
      problems.push(`runId "${bundle.runId}" is not the run of the note.exported entry ("${String(last.runId)}")`);
    if (last.at !== bundle.exportedAt || last.actor !== bundle.exportedBy) {
      problems.push(
        `exportedAt/exportedBy (${bundle.exportedAt}, ${bundle.exportedBy}) differ from the note.exported entry (${last.at}, ${last.actor})`,
      );
    }
  }
  problems.push(
    ...compareSections(
      bundle.manifest,
      { ...(bundle as unknown as Record<SectionName, object[]>), audit: covered },
      chain.broken ? ['audit'] : [],
    ),
  );

  const pins = new Set((options.trusted ?? []).map((k) => k.fingerprint));
  const keysWord = pinned ? 'trusted keys (--trust)' : 'identities registered in the bundle';
  const lookup: KeyLookup = (name) => {
    const identity = bundle.identities.find((i) => i.name === name);
    // The fingerprint is recomputed from the key itself: the field beside it proves nothing.
    const fp = identity ? keyFingerprint(identity.publicKeyPem) : undefined;
    if (!identity || fp === undefined) return undefined;
    if (pinned && !pins.has(fp)) return undefined;
    return { ...identity, fingerprint: fp };
  };
  const bySeq = new Map(bundle.audit.map((e) => [e.seq, e]));
  const audited = (event: string, id: string) => bundle.audit.find((e) => e.event === event && e.entityId === id);

  for (const s of bundle.signoffs) {
    const st = s.statement as { signer?: string; signerKey?: string; planHash?: string; at?: string };
    const signer = String(st.signer);
    const what = `sign-off #${s.id} (by ${signer}, plan ${String(st.planHash).slice(0, 12)}…)`;
    const before = problems.length;
    if (canonicalJson(s.statement) !== s.signedText)
      problems.push(`${what}: its statement is no longer the text that was signed: it was edited`);
    const { key, problem } = signerProblem(what, signer, String(st.signerKey), lookup, keysWord);
    if (problem) problems.push(problem);
    if (key && !verifyText(key.publicKeyPem, s.signedText, s.signature)) {
      problems.push(
        `${what}: the signature does not verify against ${signer}'s key ${shortFingerprint(key.fingerprint)}: it was swapped or altered`,
      );
    }
    const entry = audited('signoff.imported', String(s.id));
    if (entry && (entry.detail.signature !== s.signature || entry.detail.statementSha256 !== sha256Hex(s.signedText))) {
      problems.push(`${what}: its signature or statement differs from the one recorded at audit seq ${entry.seq} when it was imported`);
    }
    result.signatures.push({
      what: `sign-off of plan ${String(st.planHash).slice(0, 12)}…`,
      signer,
      role: key?.role ?? null,
      fingerprint: String(st.signerKey),
      at: String(st.at),
      valid: problems.length === before,
    });
  }

  const findings = checkCheckpoints(
    bundle.checkpoints,
    bySeq,
    { firstSeq: chain.firstSeq, lastSeq: chain.head?.seq ?? null },
    lookup,
    keysWord,
  );
  for (const f of findings) {
    problems.push(...f.problems);
    const key = lookup(f.checkpoint.signer);
    result.signatures.push({
      what: `checkpoint of the chain head at seq ${f.checkpoint.seq}`,
      signer: f.checkpoint.signer,
      role: key?.role ?? null,
      fingerprint: f.checkpoint.signerKey,
      at: f.checkpoint.at,
      valid: f.signed,
    });
  }
  for (const e of bundle.audit.filter((x) => x.event === 'audit.checkpoint')) {
    if (!bundle.checkpoints.some((c) => String(c.id) === e.entityId))
      problems.push(`checkpoint #${e.entityId} recorded at audit seq ${e.seq} is missing from checkpoints[]: it was removed`);
  }
  checkIdentities(bundle, problems);

  result.signedHead = last !== undefined && findings.some((f) => f.signed && f.checkpoint.seq === last.seq);
  if (!result.signedHead) {
    notes.push(
      'the head of the chain is not covered by a signed checkpoint: the bundle is self-consistent, but a rebuild of every hash would not be caught (export with --identity to sign it)',
    );
  }
  if (!pinned)
    notes.push(
      'keys were taken from the bundle itself; pin them with --trust KEY.pem to rule out a bundle rebuilt and re-signed with other keys',
    );
  result.ok = problems.length === 0;
  return result;
}

function keyFingerprint(pem: string): string | undefined {
  try {
    return fingerprint(pem);
  } catch {
    return undefined;
  }
}

function checkIdentities(bundle: NoteBundle, problems: string[]): void {
  for (const identity of bundle.identities) {
    if (keyFingerprint(identity.publicKeyPem) !== identity.fingerprint) {
      problems.push(
        `identity ${identity.name}: its public key does not hash to its fingerprint ${shortFingerprint(identity.fingerprint)}: the key was replaced`,
      );
    }
  }
  for (const e of bundle.audit.filter((x: ChainedEntry) => x.event === 'identity.registered')) {
    const identity = bundle.identities.find((i) => i.name === e.entityId);
    if (identity && identity.fingerprint !== e.detail.fingerprint) {
      problems.push(
        `identity ${identity.name} carries key ${shortFingerprint(identity.fingerprint)}, but audit seq ${e.seq} registered key ${shortFingerprint(String(e.detail.fingerprint))}`,
      );
    }
  }
}
