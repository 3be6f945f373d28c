/**
 * A bundle's sign-offs, judged against trusted keys only: is each signature what its signer
 * signed, and — for a manual-tier run — does one of them count? "Counts" is decided by the
 * execution gate's own rules (signoffRules.ts), so verify and the gate cannot disagree.
 */
import { canonicalJson } from '../../../shared/canonicalJson.ts';
import type { BundleSignoff, NoteBundle } from './bundle.ts';
import { sha256Hex } from './chain.ts';
import { shortFingerprint, verifyText } from './keys.ts';
import { operatorName, signoffProblem } from './signoffRules.ts';
import type { Signoff } from './signoffs.ts';
import { carriedKey, resolveSigner, trustedIdentity, type Trust } from './trust.ts';
import type { SignoffFinding } from './verdict.ts';

export interface SignatureSummary {
  what: string;
  signer: string;
  role: string | null;
  fingerprint: string;
  at: string;
  /** Verified against a key the verifier trusts. */
  valid: boolean;
}

export interface SignatureCheck {
  summary: SignatureSummary;
  broken: string[];
  untrusted: string[];
}

interface Statement {
  requestId?: string;
  signer?: string;
  signerKey?: string;
  planHash?: string;
  impactHash?: string;
  jobHash?: string;
  comment?: string;
  at?: string;
}

export function checkSignoffSignatures(bundle: NoteBundle, trust: Trust): SignatureCheck[] {
  return bundle.signoffs.map((s) => {
    const st = s.statement as Statement;
    const signer = String(st.signer);
    const what = `sign-off #${s.id} (by ${signer}, plan ${String(st.planHash).slice(0, 12)}…)`;
    const broken: string[] = [];
    const untrusted: string[] = [];
    if (canonicalJson(s.statement) !== s.signedText)
      broken.push(`${what}: its statement is no longer the text that was signed: it was edited`);
    const resolved = resolveSigner(trust, bundle.identities, signer, String(st.signerKey));
    const key = 'key' in resolved ? resolved.key : undefined;
    if ('problem' in resolved) untrusted.push(`${what} is signed with key ${shortFingerprint(String(st.signerKey))}: ${resolved.problem}`);
    if (key && !verifyText(key.publicKeyPem, s.signedText, s.signature)) {
      broken.push(
        `${what}: the signature does not verify against ${signer}'s key ${shortFingerprint(key.fingerprint)}: it was swapped or altered`,
      );
    }
    const carried = key ? undefined : carriedKey(bundle.identities, [s.publicKeyPem], String(st.signerKey));
    if (carried !== undefined && !verifyText(carried, s.signedText, s.signature))
      broken.push(`${what}: the signature does not verify even against the key it names: it was swapped or altered`);
    const entry = bundle.audit.find((e) => e.event === 'signoff.imported' && e.entityId === String(s.id));
    if (entry && (entry.detail.signature !== s.signature || entry.detail.statementSha256 !== sha256Hex(s.signedText))) {
      broken.push(`${what}: its signature or statement differs from the one recorded at audit seq ${entry.seq} when it was imported`);
    }
    return {
      summary: {
        what: `sign-off of plan ${String(st.planHash).slice(0, 12)}…`,
        signer,
        role: key?.role ?? null,
        fingerprint: String(st.signerKey),
        at: String(st.at),
        valid: key !== undefined && broken.length === 0,
      },
      broken,
      untrusted,
    };
  });
}

const asSignoff = (s: BundleSignoff): Signoff => {
  const st = s.statement as Statement;
  return {
    id: s.id,
    planHash: String(st.planHash),
    requestId: String(st.requestId),
    impactHash: String(st.impactHash),
    jobHash: String(st.jobHash),
    signer: String(st.signer),
    signerKey: String(st.signerKey),
    signedAt: String(st.at),
    comment: String(st.comment),
    statementJson: s.signedText,
    signature: s.signature,
    publicKeyPem: s.publicKeyPem,
    importedAt: String(s.importedAt),
    importedBy: String(s.importedBy),
  };
};

/** Does a manual-tier run that executed carry a sign-off that counts, by trusted keys? */
export function signoffFinding(bundle: NoteBundle, trust: Trust): SignoffFinding {
  const run = bundle.run[0] as
    { kind?: string; tier?: string | null; planHash?: string; jobHash?: string; executedBy?: string | null } | undefined;
  const required = run?.kind === 'execute' && run.tier === 'manual';
  if (!run) return { required: false, by: null, problems: [] };
  const planHash = String(run.planHash);
  const identity = trustedIdentity(trust, bundle.identities);
  const rules = {
    planHash,
    jobHash: String(run.jobHash),
    operator: operatorName(run.executedBy ?? ''),
    identity,
    registry: trust.source === 'pinned' ? 'among the keys pinned with --trust' : `in ${trust.where}`,
    // The dry run the lead was shown must be in the bundle, and its body must still hash to what was signed.
    impactOnRecord: (impactHash: string) =>
      bundle.evidence.some(
        (e) => e.kind === 'dry-run' && e.planHash === planHash && e.bodySha256 === impactHash && sha256Hex(e.bodyJson) === impactHash,
      ),
  };
  const judged = bundle.signoffs
    .filter((s) => (s.statement as Statement).planHash === planHash)
    .map((s) => ({ s, problem: signoffProblem(asSignoff(s), rules) }));
  const counting = judged.find((j) => j.problem === null);
  if (counting) {
    const signer = String((counting.s.statement as Statement).signer);
    return { required, by: `${signer} (${identity(signer)?.role ?? 'lead'})`, problems: [] };
  }
  if (!required) return { required, by: null, problems: [] };
  const problems = judged.map((j) => `no sign-off counts for this manual-tier run: ${String(j.problem)}`);
  return {
    required,
    by: null,
    problems:
      problems.length > 0
        ? problems
        : [
            `this manual-tier run executed, but the bundle carries no sign-off of its plan ${planHash.slice(0, 12)}…: a lead's sign-off is required (four eyes), and without one the note proves no approval`,
          ],
  };
}
