/** `run-backfill signoff request | import | list` and `run-backfill sign`. */
import { InputError } from '../../../shared/errors.ts';
import { LIMITS } from '../../../shared/limits.ts';
import { approvalOf, describeApproval, type ApprovalSnapshot } from '../../../shared/approval.ts';
import { redFlags, signedFlags } from '../../../shared/redFlags.ts';
import { jobSchema, planSchema, type Job } from '../../../shared/schemas.ts';
import type { Tier } from '../../../shared/tier.ts';
import { approvalFor } from '../../engine/runbook/approval.ts';
import { jobSummary } from '../../engine/runbook/planning.ts';
import { preparePlan } from '../../engine/runbook/prepare.ts';
import { shortFingerprint } from '../../engine/evidence/keys.ts';
import type { ImpactGraph } from '../../../shared/impact.ts';
import { formatImpact } from '../dryRunReport.ts';
import { evidenceRepos } from '../../engine/evidence/repos.ts';
import { checkRequest, parseJsonFile, readSignatureFile, signoffRequestSchema, signRequest } from '../../engine/evidence/signoff.ts';
import { buildSignoffRequest, planHashForRequest } from '../../engine/evidence/signoffRequest.ts';
import { planHash } from '../../engine/plan/hash.ts';
import { loadJob, loadPlan } from '../../engine/plan/load.ts';
import type { Store } from '../../engine/store/index.ts';
import { EXIT, type ExitCode } from '../exitCodes.ts';
import type { Reporter } from '../progress.ts';
import { table } from '../tables.ts';
import { notice, readInput, writeOutput } from './files.ts';
import type { GlobalOptions } from '../program.ts';
import { cliActor, identityName, ledgerPath, passphrase, vaultFor, type KeyOptions } from './keyring.ts';

export interface RequestOptions {
  runId?: string;
  plan?: string;
  planHash?: string;
  jobs: string;
  operator?: string;
  out?: string;
}

export function signoffRequest(opts: RequestOptions, store: Store): ExitCode {
  const chosen = [opts.runId, opts.plan, opts.planHash].filter((x) => x !== undefined).length;
  if (chosen !== 1)
    throw new InputError('name the plan to sign with exactly one of --run-id ID, --plan FILE or --plan-hash HASH', { field: '--run-id' });
  const hash = opts.runId ? planHashForRequest(store, opts.runId) : opts.plan ? planHash(loadPlan(opts.plan)) : (opts.planHash as string);
  const saved = store.plans.get(hash);
  if (!saved)
    throw new InputError(
      `plan ${hash.slice(0, 12)}… is not on record in ${store.file}: dry-run it first (add --dry-run to the run command)`,
      { value: hash },
    );
  const job = jobOf(store, saved.jobName, hash, opts.jobs);
  const request = buildSignoffRequest(store, {
    planHash: hash,
    job,
    operator: cliActor(opts.operator),
    approves: approvalFor(store, preparePlan(job, planSchema.parse(saved.plan), store), saved.requestId),
  });
  writeOutput(`${JSON.stringify(request, null, 2)}\n`, opts.out);
  notice(
    `Sign-off request for plan ${hash.slice(0, 12)}… (${request.requestId}): ${request.summary}, tier ${request.tier}. A lead signs it with: run-backfill sign ${opts.out ?? 'req.json'} --identity LEAD > sig.json`,
  );
  return EXIT.ok;
}

/** The job version the dry run measured: the stored one when it matches, else the job file. */
function jobOf(store: Store, name: string, plan: string, jobsDir: string): Job {
  const measured = (store.evidence.latest({ planHash: plan, kind: 'dry-run' })?.body as { jobHash?: string } | undefined)?.jobHash;
  const stored = store.jobs.get(name);
  if (stored && stored.jobHash === measured) return jobSchema.parse(stored.definition);
  // buildSignoffRequest refuses, naming both hashes, when the job file changed since the dry run.
  return loadJob(jobsDir, name).job;
}

export interface SignOptions extends KeyOptions, GlobalOptions {
  identity?: string;
  comment?: string;
  out?: string;
}

export async function sign(file: string, opts: SignOptions): Promise<ExitCode> {
  const request = parseJsonFile(
    readInput(file, 'sign-off request', LIMITS.signoffRequestBytes).toString('utf8'),
    signoffRequestSchema,
    file,
    'sign-off request',
  );
  checkRequest(request, file);
  const name = identityName(opts.identity, opts);
  notice(describeRequest(request));
  const signer = vaultFor(ledgerPath(opts), opts, await passphrase(opts, `unlock ${name}'s key`)).unlock(name);
  if (signer.identity.role !== 'lead')
    notice(`Note: ${name}'s key is an ${signer.identity.role} key; only a lead's sign-off counts for a manual-tier run.`);
  const signature = signRequest(request, signer, opts.comment ?? '', new Date());
  writeOutput(`${JSON.stringify(signature, null, 2)}\n`, opts.out);
  notice(
    `Signed by ${name} (key ${shortFingerprint(signer.identity.fingerprint)}): plan ${request.planHash.slice(0, 12)}…, impact ${request.impactHash.slice(0, 12)}…, job ${request.jobHash.slice(0, 12)}…`,
  );
  return EXIT.ok;
}

/**
 * What the lead is about to approve, restated from the request's hashed parts (plan, job, dry
 * run) — never from its `approves` text, which nothing signs — except the snapshot, shown as the
 * request states it.
 */
function describeRequest(r: ReturnType<typeof signoffRequestSchema.parse>): string {
  const plan = planSchema.parse(r.plan);
  const job = jobSchema.parse(r.job);
  const body = JSON.parse(r.impact.bodyJson) as { partitions?: unknown[]; impact?: ImpactGraph };
  const partitions = body.partitions?.length ?? 0;
  const approval = approvalOf({
    plan,
    job: { name: job.name, target: jobSummary(job).target, downstream: job.classification.downstream },
    summary: r.summary,
    tier: r.tier,
    partitions,
    flags: signedFlags(redFlags({ plan, job, partitionCount: partitions, dryRunOnRecord: true, tier: r.tier as Tier }), body),
    dryRun: { evidenceId: r.impact.evidenceId, createdAt: r.impact.createdAt, impactHash: r.impactHash, body },
    snapshot: snapshotOf(r.approves?.snapshot),
  });
  return [
    `Sign-off request ${r.requestId} from ${r.requestedBy} (${r.createdAt}); every hash checked:`,
    `  plan ${r.planHash}, job ${r.jobHash}, dry run sha256 ${r.impactHash}`,
    ...describeApproval(approval).map((line) => `  ${line}`),
    // What the run affects, as the dry run derived it (the hashed body carries the graph).
    ...(body.impact
      ? formatImpact(body.impact)
          .split('\n')
          .map((l) => `  ${l}`)
      : []),
  ].join('\n');
}

function snapshotOf(v: unknown): ApprovalSnapshot | null {
  const s = v as Partial<ApprovalSnapshot> | null | undefined;
  if (!s || typeof s.location !== 'string') return null;
  return {
    evidenceId: Number(s.evidenceId ?? 0),
    location: `${s.location} (as the request states; not covered by the hashes)`,
    partitions: Number(s.partitions ?? 0),
    takenAt: String(s.takenAt ?? ''),
  };
}

export function importSignoff(file: string, opts: { operator?: string }, store: Store, out: Reporter): ExitCode {
  const signature = readSignatureFile(readInput(file, 'signature file', LIMITS.signatureFileBytes).toString('utf8'), file);
  const { signoff, created } = evidenceRepos(store).signoffs.record(signature, cliActor(opts.operator));
  const s = signature.statement;
  const registered = evidenceRepos(store).identities.get(s.signer);
  const standing = !registered
    ? `${s.signer} is not registered here: it will not count until their public key is registered as a lead`
    : registered.fingerprint !== s.signerKey
      ? `it was made with key ${shortFingerprint(s.signerKey)}, not ${s.signer}'s registered key ${shortFingerprint(registered.fingerprint)}: it will not count`
      : registered.role !== 'lead'
        ? `${s.signer} is registered as an operator: it will not count as a lead sign-off`
        : 'the signer is a registered lead';
  out.record(
    'signoff',
    { id: signoff.id, created, planHash: s.planHash, signer: s.signer },
    `${created ? 'Recorded' : 'Already on record:'} sign-off #${signoff.id} by ${s.signer} of plan ${s.planHash.slice(0, 12)}… (${s.requestId}); ${standing}.`,
  );
  return EXIT.ok;
}

export function listSignoffs(opts: { runId?: string }, store: Store, out: Reporter): ExitCode {
  const { signoffs } = evidenceRepos(store);
  const list = opts.runId ? signoffs.forRequest(opts.runId) : signoffs.list();
  out.record(
    'signoffs',
    { signoffs: list.map(({ statementJson: _s, publicKeyPem: _p, ...rest }) => rest) },
    list.length === 0
      ? 'No sign-offs on record.'
      : table(
          ['#', 'request', 'plan', 'signer', 'key', 'signed', 'comment'],
          list.map((s) => [
            String(s.id),
            s.requestId,
            `${s.planHash.slice(0, 12)}…`,
            s.signer,
            shortFingerprint(s.signerKey),
            s.signedAt,
            s.comment,
          ]),
        ),
  );
  return EXIT.ok;
}
