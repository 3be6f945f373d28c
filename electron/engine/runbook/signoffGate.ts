/**
 * Four eyes (docs/design.md §1, source article 001): a manual-tier run executes only with a valid
 * sign-off on record from a registered lead who is not the operator, over exactly this plan.
 * Every sign-off that does not count says why, so the operator knows what to fix.
 */
import { evidenceRepos } from '../evidence/repos.ts';
import { operatorName, signoffProblem } from '../evidence/signoffRules.ts';
import type { Gate } from './gates.ts';
import type { PreparedPlan } from './prepare.ts';

/** A lead signs a manual-tier plan, and any plan that overwrites closed partitions on purpose. */
export function signoffRequired(prepared: PreparedPlan): { required: boolean; why: string } {
  if (prepared.tier === 'manual') return { required: true, why: 'manual tier' };
  if ((prepared.plan.overwrite_closed ?? []).length > 0) return { required: true, why: 'the plan overwrites closed partitions' };
  return { required: false, why: `${prepared.tier} tier` };
}

export const signoffGate: Gate = ({ prepared, store, operator }) => {
  const need = signoffRequired(prepared);
  if (!need.required) return [];
  const { identities, signoffs } = evidenceRepos(store);
  const { planHash, jobHash } = prepared;
  const requestId = prepared.plan.request_id;
  const short = planHash.slice(0, 12);
  const context = {
    planHash,
    jobHash,
    operator: operatorName(operator),
    identity: (name: string) => identities.get(name),
    impactOnRecord: (impactHash: string) => store.evidence.list({ planHash, kind: 'dry-run' }).some((e) => e.bodySha256 === impactHash),
  };
  const forPlan = signoffs.forPlan(planHash);
  const problems = forPlan.map((s) => signoffProblem(s, context));
  if (problems.some((p) => p === null)) return [];
  if (forPlan.length > 0) return problems.filter((p): p is string => p !== null).map((p) => `lead sign-off: ${p}`);

  const older = signoffs.forRequest(requestId).filter((s) => s.planHash !== planHash);
  if (older.length > 0) {
    return older.map(
      (s) =>
        `lead sign-off: the sign-off by ${s.signer} (signed ${s.signedAt}) is for an older version of plan ${requestId} (plan ${s.planHash.slice(0, 12)}…); ` +
        `the plan about to run is ${short}…: it changed after it was signed — ask for a new sign-off of this version`,
    );
  }
  return [
    `lead sign-off: ${need.why === 'manual tier' ? 'manual tier needs' : `${need.why}, which needs`} a lead's sign-off, and none is on record for plan ${short}… (request ${requestId}): ` +
      `export a request with \`run-backfill signoff request --run-id ${requestId} > req.json\`, have a lead sign it ` +
      '(`run-backfill sign req.json --identity LEAD > sig.json`), then `run-backfill signoff import sig.json`',
  ];
};
