/**
 * What `verify` and `import` conclude about a bundle: the one decision, from the findings.
 *
 *   INTACT          nothing was changed, the chain head is signed by a key the verifier trusts,
 *                   every signature in it verifies against a trusted key, and a manual-tier run
 *                   carries a sign-off that counts (a trusted lead, not the operator, this plan)
 *   BROKEN          the bundle contradicts itself: an entry, item, manifest or signature no
 *                   longer matches what was hashed or signed
 *   UNTRUSTED       self-consistent, but not vouched for by a trusted key: the head is not
 *                   signed, or a signature is by a key the verifier does not trust (a bundle
 *                   rebuilt and re-signed by someone else looks exactly like this)
 *   NOT SIGNED OFF  trusted and unchanged, but a manual-tier run without a sign-off that counts
 *
 * BROKEN outranks UNTRUSTED, which outranks NOT SIGNED OFF: the report leads with the worst.
 */
export type Verdict = 'intact' | 'broken' | 'untrusted' | 'not-signed-off';

export const VERDICT_WORD: Record<Verdict, string> = {
  intact: 'INTACT',
  broken: 'BROKEN',
  untrusted: 'UNTRUSTED',
  'not-signed-off': 'NOT SIGNED OFF',
};

export interface SignoffFinding {
  /** A manual-tier run that executed: it must carry a lead's sign-off. */
  required: boolean;
  /** Who signed off, when a sign-off counts: "alice (lead)". */
  by: string | null;
  /** Why none counts (when required). */
  problems: string[];
}

export interface Findings {
  /** Things that no longer match their hash or signature. */
  broken: readonly string[];
  /** Signatures and keys the verifier cannot vouch for. */
  untrusted: readonly string[];
  /** The chain head is covered by a checkpoint signed by a trusted key, over this very head. */
  headSigned: boolean;
  signoff: SignoffFinding;
}

export function decideVerdict(f: Findings): Verdict {
  if (f.broken.length > 0) return 'broken';
  if (!f.headSigned || f.untrusted.length > 0) return 'untrusted';
  if (f.signoff.required && f.signoff.by === null) return 'not-signed-off';
  return 'intact';
}
