/**
 * Sign-off files. The operator exports a REQUEST (the plan, its job, the dry-run evidence and
 * their hashes); a lead checks it, signs a STATEMENT over {planHash, impactHash, jobHash,
 * comment, signer, at} and returns a SIGNATURE file. The signature is Ed25519 over the exact
 * `signedText` (RFC 8785 canonical JSON of the statement), so openssl can check it alone.
 */
import { z } from 'zod';
import { canonicalJson } from '../../../shared/canonicalJson.ts';
import { InputError } from '../../../shared/errors.ts';
import { LIMITS, overLimitError } from '../../../shared/limits.ts';
import { parseBoundedJson } from '../input/boundedJson.ts';
import { jobSchema, planSchema } from '../../../shared/schemas.ts';
import { jobHash, planHash } from '../plan/hash.ts';
import { sha256Hex } from './chain.ts';
import { fingerprint, parsePublicKey, shortFingerprint, signText, verifyText } from './keys.ts';
import type { UnlockedIdentity } from './vault.ts';

export const REQUEST_FORMAT = 'backfill-runbook/signoff-request@1';
export const SIGNATURE_FORMAT = 'backfill-runbook/signoff-signature@1';
/** Inside every signed statement, so a sign-off can never pass for a checkpoint or the reverse. */
export const SIGNOFF_PURPOSE = 'backfill-runbook/signoff@1';

const hex64 = z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex digits');

export const signoffStatementSchema = z.strictObject({
  purpose: z.literal(SIGNOFF_PURPOSE),
  requestId: z.string().min(1),
  planHash: hex64,
  impactHash: hex64,
  jobHash: hex64,
  comment: z.string(),
  signer: z.string().min(1),
  signerKey: hex64,
  at: z.string().min(1),
});
export type SignoffStatement = z.infer<typeof signoffStatementSchema>;

export const signoffRequestSchema = z.object({
  format: z.literal(REQUEST_FORMAT),
  createdAt: z.string(),
  requestedBy: z.string(),
  requestId: z.string().min(1),
  planHash: hex64,
  plan: z.unknown(),
  jobHash: hex64,
  job: z.unknown(),
  impactHash: hex64,
  impact: z.object({ evidenceId: z.number().int(), kind: z.literal('dry-run'), createdAt: z.string(), bodyJson: z.string() }),
  summary: z.string(),
  tier: z.string(),
  /**
   * What the lead approves, restated for reading (shared/approval.ts). Not covered by the
   * signature: `run-backfill sign` restates it again from the hashed plan, job and dry run, and
   * shows only the snapshot from here.
   */
  approves: z.looseObject({ snapshot: z.looseObject({}).nullable().optional() }).optional(),
});
export type SignoffRequest = z.infer<typeof signoffRequestSchema>;

export const signatureFileSchema = z.object({
  format: z.literal(SIGNATURE_FORMAT),
  statement: signoffStatementSchema,
  signedText: z.string(),
  signature: z.string(),
  publicKeyPem: z.string(),
});
export type SignatureFile = z.infer<typeof signatureFileSchema>;

export function parseJsonFile<T>(text: string, schema: z.ZodType<T>, file: string, what: string): T {
  const data = parseBoundedJson(text, { file, what });
  const result = schema.safeParse(data);
  if (!result.success) {
    const issue = result.error.issues[0];
    const field = issue?.path.join('.') ?? '';
    throw new InputError(`${file} is not a valid ${what}: field "${field}" ${issue?.message ?? 'is invalid'}`, { file, field });
  }
  return result.data;
}

/** Rechecks every hash in a request before anyone signs it: what is signed is what is shown. */
export function checkRequest(request: SignoffRequest, file: string): void {
  const fail = (field: string, message: string): never => {
    throw new InputError(`${file}: ${message}; do not sign it — ask for a fresh request`, { file, field });
  };
  const plan = planSchema.safeParse(request.plan);
  if (!plan.success) fail('plan', 'the plan is not a valid plan');
  const job = jobSchema.safeParse(request.job);
  if (!job.success) fail('job', 'the job is not a valid job definition');
  const actualPlan = planHash(plan.data as z.infer<typeof planSchema>);
  if (actualPlan !== request.planHash)
    fail('planHash', `the plan hashes to ${actualPlan.slice(0, 12)}…, not the planHash ${request.planHash.slice(0, 12)}… it claims`);
  const actualJob = jobHash(job.data as z.infer<typeof jobSchema>);
  if (actualJob !== request.jobHash)
    fail('jobHash', `the job hashes to ${actualJob.slice(0, 12)}…, not the jobHash ${request.jobHash.slice(0, 12)}… it claims`);
  const actualImpact = sha256Hex(request.impact.bodyJson);
  if (actualImpact !== request.impactHash)
    fail(
      'impactHash',
      `the dry-run evidence hashes to ${actualImpact.slice(0, 12)}…, not the impactHash ${request.impactHash.slice(0, 12)}… it claims`,
    );
  let body: unknown;
  try {
    body = JSON.parse(request.impact.bodyJson);
  } catch {
    fail('impact.bodyJson', 'the dry-run evidence is not JSON');
  }
  const measuredJob = (body as { jobHash?: unknown } | null)?.jobHash;
  if (measuredJob !== request.jobHash)
    fail(
      'impact',
      `the dry run measured job ${String(measuredJob).slice(0, 12)}…, not the job ${request.jobHash.slice(0, 12)}… of the request`,
    );
  if ((plan.data as { request_id: string }).request_id !== request.requestId)
    fail('requestId', `the plan's request_id is not ${request.requestId}`);
}

export function signRequest(request: SignoffRequest, signer: UnlockedIdentity, comment: string, at: Date): SignatureFile {
  const statement: SignoffStatement = {
    purpose: SIGNOFF_PURPOSE,
    requestId: request.requestId,
    planHash: request.planHash,
    impactHash: request.impactHash,
    jobHash: request.jobHash,
    comment,
    signer: signer.identity.name,
    signerKey: signer.identity.fingerprint,
    at: at.toISOString(),
  };
  const signedText = canonicalJson(statement);
  return {
    format: SIGNATURE_FORMAT,
    statement,
    signedText,
    signature: signText(signer.privateKey, signedText),
    publicKeyPem: signer.identity.publicKeyPem,
  };
}

/** Parses a signature file and proves it self-consistent: text = statement, key = signerKey, signature valid. */
export function readSignatureFile(text: string, file: string): SignatureFile {
  // The app hands the pasted text here too: the one limit for both (shared/limits.ts).
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > LIMITS.signatureFileBytes)
    throw overLimitError({ file, what: 'sign-off signature file', size: bytes, limit: LIMITS.signatureFileBytes, unit: 'bytes' });
  const sig = parseJsonFile(text, signatureFileSchema, file, 'sign-off signature file');
  if (sig.signedText !== canonicalJson(sig.statement)) {
    throw new InputError(`${file}: signedText is not the canonical form of statement: one of them was edited after signing`, {
      file,
      field: 'signedText',
    });
  }
  const key = parsePublicKey(sig.publicKeyPem, `${file} (publicKeyPem)`);
  const fp = fingerprint(key);
  if (fp !== sig.statement.signerKey) {
    throw new InputError(
      `${file}: the statement names key ${shortFingerprint(sig.statement.signerKey)} but the file carries key ${shortFingerprint(fp)}`,
      { file, field: 'publicKeyPem' },
    );
  }
  if (!verifyText(key, sig.signedText, sig.signature)) {
    throw new InputError(
      `${file}: the signature does not verify against ${sig.statement.signer}'s key ${shortFingerprint(fp)}: the file was altered after signing`,
      { file, field: 'signature' },
    );
  }
  return sig;
}
