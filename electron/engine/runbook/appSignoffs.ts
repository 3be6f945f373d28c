/**
 * Step 4, lead sign-off, as the app offers it: export a request for a lead elsewhere, import
 * the signature file they send back, or let a lead at this computer sign with their own
 * passphrase-protected key. Whether a sign-off COUNTS is decided by the same rules as the
 * execution gate (evidence/signoffRules.ts): registered lead, not the operator, this exact plan.
 */
import type { CallArgs } from '../../../shared/contract.ts';
import type { ExportedFile, IdentityView, SignoffView } from '../../../shared/contractTypes.ts';
import { InputError } from '../../../shared/errors.ts';
import { createFileKeyVault } from '../evidence/fileVault.ts';
import type { UnlockedIdentity } from '../evidence/vault.ts';
import { checkIdentityName, checkRole, fingerprint, generateKeys, publicKeyPem, shortFingerprint } from '../evidence/keys.ts';
import { evidenceRepos } from '../evidence/repos.ts';
import { checkRequest, readSignatureFile, signRequest } from '../evidence/signoff.ts';
import { buildSignoffRequest } from '../evidence/signoffRequest.ts';
import { operatorName, signoffProblem } from '../evidence/signoffRules.ts';
import { approvalFor } from './approval.ts';
import type { RunContext } from './planning.ts';
import { assertJobUnchanged } from './planning.ts';
import { contextOf, type EngineScope } from './scope.ts';
import { signoffRequired } from './signoffGate.ts';
import { keysDir } from './workspace.ts';

export function signoffStatus(scope: EngineScope, ctx: RunContext): SignoffView {
  const { store, actor } = scope;
  const { identities, signoffs } = evidenceRepos(store);
  const { planHash, jobHash } = ctx.prepared;
  const rules = {
    planHash,
    jobHash,
    operator: operatorName(actor),
    identity: (name: string) => identities.get(name),
    impactOnRecord: (impactHash: string) => store.evidence.list({ planHash, kind: 'dry-run' }).some((e) => e.bodySha256 === impactHash),
  };
  const judged = signoffs.forPlan(planHash).map((s) => ({ s, problem: signoffProblem(s, rules) }));
  const valid = judged.find((j) => j.problem === null)?.s;
  return {
    required: signoffRequired(ctx.prepared).required,
    valid: valid ? { id: valid.id, signer: valid.signer, signedAt: valid.signedAt, comment: valid.comment } : null,
    problems: judged.flatMap((j) => (j.problem === null ? [] : [j.problem])),
    planHash,
    approves: approvalFor(store, ctx.prepared, ctx.run.runId),
  };
}

export function signoffRequestFile(scope: EngineScope, runId: string): ExportedFile {
  const ctx = contextOf(scope, runId);
  assertJobUnchanged(ctx);
  const request = buildSignoffRequest(scope.store, {
    planHash: ctx.prepared.planHash,
    job: ctx.job,
    operator: scope.actor,
    approves: approvalFor(scope.store, ctx.prepared, runId),
  });
  return { fileName: `${runId}.req.json`, mimeType: 'application/json', text: `${JSON.stringify(request, null, 2)}\n` };
}

/**
 * A registered identity's key, unlocked with its passphrase from this workspace's keys folder:
 * for a lead signing here, and for whoever signs an incident note's head at Close.
 */
export function unlockHere(
  scope: EngineScope,
  name: string,
  passphrase: string,
  elsewhere = 'sign on the computer that holds the key',
): UnlockedIdentity {
  const registered = evidenceRepos(scope.store).identities.get(name);
  if (!registered)
    throw new InputError(`${name} is not a registered identity in this workspace`, {
      field: 'signer',
      value: name,
      hint: 'create the identity on the Workspace screen first',
    });
  const vault = createFileKeyVault({ dir: keysDir(scope.store.file), passphrase: () => passphrase });
  if (!vault.has(name)) {
    throw new InputError(`${name}'s private key is not on this computer (${vault.location})`, {
      field: 'signer',
      value: name,
      hint: elsewhere,
    });
  }
  const signer = vault.unlock(name);
  if (signer.identity.fingerprint !== registered.fingerprint) {
    throw new InputError(
      `the key of ${name} here (${shortFingerprint(signer.identity.fingerprint)}) is not the registered one (${shortFingerprint(registered.fingerprint)})`,
      { field: 'signer', value: name },
    );
  }
  return signer;
}

export function signHere(scope: EngineScope, args: CallArgs<'runbook:signHere'>): SignoffView {
  const ctx = contextOf(scope, args.runId);
  assertJobUnchanged(ctx);
  const signer = unlockHere(
    scope,
    args.signer,
    args.passphrase,
    'export the request and let the lead sign it on their own computer, then import the signature',
  );
  const request = buildSignoffRequest(scope.store, { planHash: ctx.prepared.planHash, job: ctx.job, operator: scope.actor });
  checkRequest(request, 'the sign-off request');
  const signature = signRequest(request, signer, args.comment, new Date());
  evidenceRepos(scope.store).signoffs.record(signature, scope.actor);
  return signoffStatus(scope, ctx);
}

export function importSignature(scope: EngineScope, args: CallArgs<'runbook:importSignature'>): SignoffView {
  const ctx = contextOf(scope, args.runId);
  const signature = readSignatureFile(args.text, 'the signature file');
  const s = signature.statement;
  if (s.planHash !== ctx.prepared.planHash) {
    throw new InputError(
      `the signature is for plan ${s.planHash.slice(0, 12)}… (${s.requestId}), not this run's plan ${ctx.prepared.planHash.slice(0, 12)}…`,
      {
        field: 'text',
        hint: 'ask the lead to sign the request exported from this run',
      },
    );
  }
  evidenceRepos(scope.store).signoffs.record(signature, scope.actor);
  return signoffStatus(scope, ctx);
}

export function listIdentities(scope: EngineScope): IdentityView[] {
  const vault = createFileKeyVault({ dir: keysDir(scope.store.file), passphrase: () => '' });
  return evidenceRepos(scope.store)
    .identities.list()
    .map((i) => ({ name: i.name, role: i.role, fingerprint: i.fingerprint, keyHere: vault.has(i.name) }));
}

/** A new identity: key pair made here, private key saved passphrase-protected, public key registered. */
export function createIdentity(scope: EngineScope, args: CallArgs<'identities:create'>): IdentityView {
  const name = checkIdentityName(args.name, 'name');
  const role = checkRole(args.role, 'role');
  const { identities } = evidenceRepos(scope.store);
  const existing = identities.get(name);
  if (existing)
    throw new InputError(`${name} is already registered (${existing.role}, key ${shortFingerprint(existing.fingerprint)})`, {
      field: 'name',
      value: name,
    });
  const vault = createFileKeyVault({ dir: keysDir(scope.store.file), passphrase: () => args.passphrase });
  const { privateKey } = generateKeys();
  const pem = publicKeyPem(privateKey);
  vault.save({ name, role, publicKeyPem: pem, fingerprint: fingerprint(pem) }, privateKey);
  const { identity } = identities.register({ name, role, publicKeyPem: pem, actor: scope.actor });
  return { name, role, fingerprint: identity.fingerprint, keyHere: true };
}
