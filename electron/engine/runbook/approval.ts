/**
 * What a lead approves for a run (shared/approval.ts), from the store: the plan as prepared,
 * its newest dry run (the one a sign-off binds to) and the run's snapshot. The sign-off screen,
 * the sign-off request file and the CLI's request all take it from here.
 */
import { approvalOf, type Approval } from '../../../shared/approval.ts';
import { signedFlags } from '../../../shared/redFlags.ts';
import { findSnapshot } from '../snapshot/index.ts';
import type { Store } from '../store/index.ts';
import { jobSummary } from './planning.ts';
import type { PreparedPlan } from './prepare.ts';

export function approvalFor(store: Store, prepared: PreparedPlan, runId: string): Approval {
  const dry = store.evidence.latest({ planHash: prepared.planHash, kind: 'dry-run' });
  const snapshot = findSnapshot(store, runId);
  return approvalOf({
    plan: prepared.plan,
    job: { name: prepared.job.name, target: jobSummary(prepared.job).target, downstream: prepared.job.classification.downstream },
    summary: prepared.summary,
    tier: prepared.tier,
    partitions: prepared.partitions.length,
    flags: signedFlags(prepared.flags, dry?.body),
    dryRun: dry ? { evidenceId: dry.id, createdAt: dry.createdAt, impactHash: dry.bodySha256, body: dry.body } : null,
    snapshot: snapshot
      ? {
          evidenceId: snapshot.id,
          location: snapshot.body.location,
          partitions: snapshot.body.partitions.length,
          takenAt: snapshot.createdAt,
        }
      : null,
  });
}
