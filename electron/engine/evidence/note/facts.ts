/**
 * What the note's sections read from a bundle, found once: the run, its plan and job, and the
 * newest evidence of each kind with its body parsed. Everything here is in the bundle, so anyone
 * holding it renders the same note.
 */
import type { KeyChange } from '../../../../shared/keyChange.ts';
import type { BundleEvidence, NoteBundle } from '../bundle.ts';
import { parseBody } from './blocks.ts';

type Obj = Record<string, unknown>;

export interface Recorded {
  evidence: BundleEvidence;
  body: Obj;
  /** who captured it, from its audit entry (when the bundle holds it) */
  actor: string | null;
}

export interface NoteFacts {
  run: Obj;
  plan: Obj;
  planCreatedAt: string | null;
  job: Obj;
  /** the job's declared downstream tables */
  downstream: string[];
  dryRun: Recorded | undefined;
  snapshot: Recorded | undefined;
  reconciliation: Recorded | undefined;
  comparison: Recorded | undefined;
  closed: Recorded | undefined;
  /** the dry run's change by key per partition (the prediction) */
  predicted: KeyChange[];
  /** the comparison's change by key per partition (the partition after the run against its snapshot) */
  actual: KeyChange[];
}

export function noteFacts(bundle: NoteBundle): NoteFacts {
  const run = (bundle.run[0] ?? {}) as Obj;
  const latest = (kind: string): Recorded | undefined => {
    const e = [...bundle.evidence].reverse().find((x) => x.kind === kind && (kind !== 'dry-run' || jobHashOf(x) === run.jobHash));
    const fallback = e ?? [...bundle.evidence].reverse().find((x) => x.kind === kind);
    if (!fallback) return undefined;
    const entry = bundle.audit.find((a) => a.event === 'evidence.added' && a.entityId === String(fallback.id));
    return { evidence: fallback, body: parseBody(fallback.bodyJson), actor: entry?.actor ?? null };
  };
  const job = ((bundle.job[0]?.definition ?? {}) as Obj) ?? {};
  const classification = (job.classification ?? {}) as { downstream?: unknown };
  const dryRun = latest('dry-run');
  const comparison = latest('row-count-comparison');
  const keysOf = (rows: unknown, field: string): KeyChange[] =>
    ((rows as Obj[] | undefined) ?? [])
      .map((r) => r[field] as KeyChange | undefined)
      .filter((k): k is KeyChange => k !== undefined && k !== null);
  return {
    run,
    plan: ((bundle.plan[0]?.plan ?? {}) as Obj) ?? {},
    planCreatedAt: bundle.plan[0]?.createdAt ?? null,
    job,
    downstream: Array.isArray(classification.downstream) ? classification.downstream.map(String) : [],
    dryRun,
    snapshot: latest('snapshot'),
    reconciliation: latest('reconciliation'),
    comparison,
    closed: latest('runbook-closed'),
    predicted: keysOf(dryRun?.body.partitions, 'keys'),
    actual: keysOf(comparison?.body.rows, 'keys'),
  };
}

function jobHashOf(e: BundleEvidence): unknown {
  return parseBody(e.bodyJson).jobHash;
}
