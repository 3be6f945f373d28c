/**
 * What a lead approves, restated in one place for the sign-off screen, the sign-off request
 * file a lead opens on their own machine, `run-backfill sign` and the incident note: the range
 * and partitions, the change by key the dry run measured, the red flags, the tables downstream
 * to notify and the snapshot the partitions can be restored from. Built from the plan, the job
 * and the dry run's body — the very things the signature's hashes cover — plus the snapshot.
 */
import { describeKeyChange, describeMeasure, totalKeyChange, type KeyChange, type KeyChangeTotals } from './keyChange.ts';
import type { RedFlag } from './redFlags.ts';
import type { Plan } from './schemas.ts';

export interface ApprovalSnapshot {
  evidenceId: number;
  location: string;
  partitions: number;
  takenAt: string;
}

export interface Approval {
  requestId: string;
  reason: string;
  requestedBy: string;
  /** "61 daily partitions, 2026-05-01 to 2026-06-30 inclusive" */
  summary: string;
  range: { from: string; to: string };
  partitions: number;
  writeMode: string;
  tier: string;
  job: string;
  target: string;
  /** the dry run this sign-off is bound to (its body's sha256 is the statement's impactHash) */
  dryRun: { evidenceId: number; createdAt: string; impactHash: string } | null;
  /** the change by key, summed over partitions; null where the target cannot measure it (S3) */
  change: KeyChangeTotals | null;
  /** rows now → rows after, over every partition */
  rows: { before: number; after: number };
  flags: RedFlag[];
  downstream: string[];
  snapshot: ApprovalSnapshot | null;
}

type Obj = Record<string, unknown>;

/** The dry run body's partitions' change by key, where it has one. */
export function dryRunKeyChanges(body: unknown): KeyChange[] {
  const partitions = ((body as Obj | null)?.partitions as Obj[] | undefined) ?? [];
  return partitions.map((p) => p.keys as KeyChange | undefined).filter((k): k is KeyChange => k !== undefined && k !== null);
}

export function approvalOf(input: {
  plan: Plan;
  job: { name: string; target: string; downstream: readonly string[] };
  summary: string;
  tier: string;
  partitions: number;
  flags: readonly RedFlag[];
  dryRun: { evidenceId: number; createdAt: string; impactHash: string; body: unknown } | null;
  snapshot: ApprovalSnapshot | null;
}): Approval {
  const { plan, dryRun } = input;
  const keys = dryRun ? dryRunKeyChanges(dryRun.body) : [];
  const rows = ((dryRun?.body as Obj | null)?.partitions as { source?: Obj; target?: Obj }[] | undefined) ?? [];
  return {
    requestId: plan.request_id,
    reason: plan.reason,
    requestedBy: plan.requested_by ?? '',
    summary: input.summary,
    range: { from: plan.range.from, to: plan.range.to },
    partitions: input.partitions,
    writeMode: plan.write_mode,
    tier: input.tier,
    job: input.job.name,
    target: input.job.target,
    dryRun: dryRun ? { evidenceId: dryRun.evidenceId, createdAt: dryRun.createdAt, impactHash: dryRun.impactHash } : null,
    change: keys.length > 0 ? totalKeyChange(keys) : null,
    rows: {
      before: rows.reduce((n, r) => n + Number(r.target?.rows ?? 0), 0),
      after: rows.reduce((n, r) => n + Number(r.source?.rows ?? 0), 0),
    },
    flags: [...input.flags],
    downstream: [...input.job.downstream],
    snapshot: input.snapshot,
  };
}

/** The approval as lines of text (the CLI's `sign`, the request's notice, the note). */
export function describeApproval(a: Approval): string[] {
  const lines = [
    `Request ${a.requestId}: ${a.reason || '(no reason given)'} — requested by ${a.requestedBy || '(nobody named)'}`,
    `Range: ${a.summary} (${a.range.from} to ${a.range.to}, half-open), ${a.writeMode}, tier ${a.tier}`,
    `Job ${a.job} → ${a.target}`,
    a.dryRun
      ? `Dry run #${a.dryRun.evidenceId} at ${a.dryRun.createdAt}: rows ${a.rows.before} now → ${a.rows.after} after`
      : 'No dry run on record: nothing measured to approve',
  ];
  if (a.change) {
    lines.push(`Change by key: ${describeKeyChange(a.change)} in ${a.change.partitionsChanged} of ${a.change.partitions} partitions`);
    for (const m of a.change.measures) lines.push(`  ${describeMeasure(m)}`);
    const movers = a.change.movers.slice(0, 6);
    if (movers.length > 0)
      lines.push(
        `  moved by ${[...new Set(movers.map((m) => m.column))].join(', ')}: ${movers
          .map((m) => `${m.value ?? 'NULL'} ${Object.values(m.net).map(signedText).join(' / ')}`)
          .join('; ')}`,
      );
  }
  lines.push(
    a.flags.length === 0
      ? 'Red flags: none'
      : `Red flags: ${a.flags.map((f) => `${f.severity === 'block' ? 'BLOCK' : 'warn'} ${f.message}`).join('; ')}`,
  );
  lines.push(`Downstream to notify: ${a.downstream.length > 0 ? a.downstream.join(', ') : 'none declared'}`);
  lines.push(
    a.snapshot
      ? `Restorable from snapshot #${a.snapshot.evidenceId} (${a.snapshot.partitions} partitions at ${a.snapshot.location}, ${a.snapshot.takenAt})`
      : 'No snapshot on record: the partitions could not be put back as they are',
  );
  return lines;
}

const signedText = (v: string): string => (v.startsWith('-') ? v : `+${v}`);
