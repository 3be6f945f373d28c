/**
 * What a sign-off approves, restated on the sign-off screen (the request file a lead opens
 * elsewhere carries the same, shared/approval.ts): range and partitions, the change by key the
 * dry run measured, the red flags, the tables downstream, the snapshot to restore from. The
 * red-flags table and the impact graph have their places here (`flags`, `graph`).
 */
import type { ReactNode } from 'react';
import type { Approval } from '../../shared/approval.ts';
import { int, when } from '../lib/format.ts';
import { ChangeByKey } from './ChangeByKey.tsx';
import { Badge } from './StatusBadge.tsx';

export function ApprovalSummary({ approval, flags, graph }: { approval: Approval; flags?: ReactNode; graph?: ReactNode }) {
  const a = approval;
  return (
    <section className="approval" aria-label="What this sign-off approves" data-testid="approval">
      <h3>What you approve</h3>
      <dl className="facts">
        <dt>Request</dt>
        <dd>
          {a.requestId}: {a.reason || <span className="muted">(no reason given)</span>} — requested by{' '}
          {a.requestedBy || <span className="danger">nobody named</span>}
        </dd>
        <dt>Range</dt>
        <dd data-testid="approval-range">
          {a.summary} ({a.range.from} to {a.range.to}, half-open) · {a.writeMode} · tier {a.tier}
        </dd>
        <dt>Writes</dt>
        <dd>
          {a.job} → {a.target}
        </dd>
        <dt>Dry run</dt>
        <dd>
          {a.dryRun ? (
            <>
              #{a.dryRun.evidenceId}, {when(a.dryRun.createdAt)}: {int(a.rows.before)} rows now → {int(a.rows.after)} after
            </>
          ) : (
            <span className="danger">none on record: nothing measured to approve</span>
          )}
        </dd>
        <dt>Restorable from</dt>
        <dd data-testid="approval-snapshot">
          {a.snapshot ? (
            <>
              snapshot #{a.snapshot.evidenceId}: {int(a.snapshot.partitions)} partitions at{' '}
              <span className="mono">{a.snapshot.location}</span>, {when(a.snapshot.takenAt)}
            </>
          ) : (
            <span className="danger">no snapshot on record: the partitions could not be put back as they are</span>
          )}
        </dd>
        <dt>Downstream to notify</dt>
        <dd data-testid="approval-downstream">{a.downstream.length > 0 ? a.downstream.join(', ') : 'none declared'}</dd>
      </dl>
      {a.change ? (
        <ChangeByKey totals={a.change} what="predicted by the dry run" detail={false} />
      ) : (
        <p className="muted">The target cannot measure a change by key (S3): the dry run's row counts are what is approved.</p>
      )}
      <div className="approval-flags" data-slot="red-flags">
        <h4>Red flags</h4>
        {flags ??
          (a.flags.length === 0 ? (
            <p className="muted">none</p>
          ) : (
            <ul className="reasons" data-testid="approval-flags">
              {a.flags.map((f) => (
                <li key={`${f.code}-${f.field ?? ''}`}>
                  <Badge tone={f.severity === 'block' ? 'danger' : 'warn'}>{f.severity}</Badge> {f.message}
                </li>
              ))}
            </ul>
          ))}
      </div>
      {graph && (
        <div className="approval-graph" data-slot="impact-graph">
          {graph}
        </div>
      )}
    </section>
  );
}
