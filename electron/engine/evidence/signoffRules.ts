/**
 * When does a sign-off count? Only when all of these hold, checked at the moment of execution:
 * the signer is a registered identity whose registered key made the signature, the signature
 * verifies over the statement, the signer is a lead, the signer is not the operator executing,
 * and the statement covers exactly this plan, this job and dry-run evidence on record.
 */
import { sha256Hex } from './chain.ts';
import type { Identity } from './identities.ts';
import { shortFingerprint, verifyText } from './keys.ts';
import { signoffStatementSchema } from './signoff.ts';
import type { Signoff } from './signoffs.ts';

export interface SignoffContext {
  planHash: string;
  jobHash: string;
  /** The identity name of the operator executing (see operatorName). */
  operator: string;
  identity(name: string): Pick<Identity, 'name' | 'role' | 'publicKeyPem' | 'fingerprint'> | undefined;
  /** Whether dry-run evidence with this body hash is on record for the plan. */
  impactOnRecord(impactHash: string): boolean;
  /** Where identities are looked up, for messages: "in this workspace" unless said otherwise. */
  registry?: string;
}

/** The identity name in a CLI actor: `alice@host` → `alice`; a bare name stays as it is. */
export function operatorName(actor: string): string {
  const at = actor.lastIndexOf('@');
  return at > 0 ? actor.slice(0, at) : actor;
}

/** Why this sign-off does not count, or null when it does. */
export function signoffProblem(s: Signoff, ctx: SignoffContext): string | null {
  const who = `the sign-off by ${s.signer} (signed ${s.signedAt})`;
  const identity = ctx.identity(s.signer);
  if (identity === undefined) {
    return `${who} does not count: ${s.signer} is not a registered identity ${ctx.registry ?? 'in this workspace'} (key ${shortFingerprint(s.signerKey)}); register their public key with \`run-backfill identity register --name ${s.signer} --role lead --public-key FILE\``;
  }
  if (identity.fingerprint !== s.signerKey) {
    return `${who} does not count: it was made with key ${shortFingerprint(s.signerKey)}, which is not ${s.signer}'s registered key ${shortFingerprint(identity.fingerprint)} (an unregistered key)`;
  }
  if (!verifyText(identity.publicKeyPem, s.statementJson, s.signature)) {
    return `${who} does not count: its signature does not verify against ${s.signer}'s registered key: it was altered after signing`;
  }
  const statement = signoffStatementSchema.safeParse(safeParse(s.statementJson));
  const st = statement.success ? statement.data : undefined;
  if (
    !st ||
    st.planHash !== s.planHash ||
    st.jobHash !== s.jobHash ||
    st.impactHash !== s.impactHash ||
    st.signer !== s.signer ||
    st.signerKey !== s.signerKey
  ) {
    return `${who} does not count: the recorded columns differ from the signed statement (sha256 ${sha256Hex(s.statementJson).slice(0, 12)}…)`;
  }
  if (identity.role !== 'lead') {
    return `${who} does not count: ${s.signer} is registered as ${identity.role === 'operator' ? 'an operator' : identity.role}, not a lead`;
  }
  if (s.signer === ctx.operator) {
    return `${who} does not count: ${s.signer} is the operator executing this run; four eyes need a lead other than the operator`;
  }
  if (s.jobHash !== ctx.jobHash) {
    return `${who} does not count: it covers job version ${s.jobHash.slice(0, 12)}…, but the job about to run is ${ctx.jobHash.slice(0, 12)}… (the job changed after it was signed)`;
  }
  if (!ctx.impactOnRecord(s.impactHash)) {
    return `${who} does not count: the dry-run evidence it was shown (sha256 ${s.impactHash.slice(0, 12)}…) is not on record for this plan`;
  }
  return null;
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
