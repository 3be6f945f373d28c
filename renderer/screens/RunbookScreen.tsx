/**
 * One run's runbook: the seven steps on the left (locked until the one before holds), the
 * selected step on the right. The engine decides what is unlocked; this screen shows it.
 */
import { useEffect } from 'react';
import type { RecordedSteps, RunbookView } from '../../shared/contractTypes.ts';
import type { StepId } from '../../shared/runbookSteps.ts';
import { RunStatus, TierBadge } from '../components/StatusBadge.tsx';
import { StepList } from '../components/StepList.tsx';
import { useCall } from '../hooks/useCall.ts';
import { useApp } from '../store/index.ts';
import { CloseStep } from '../steps/CloseStep.tsx';
import { CompareStep } from '../steps/CompareStep.tsx';
import { ExecuteStep } from '../steps/ExecuteStep.tsx';
import { ImpactStep } from '../steps/ImpactStep.tsx';
import { SanityStep } from '../steps/SanityStep.tsx';
import { SignoffStep } from '../steps/SignoffStep.tsx';
import { SnapshotStep } from '../steps/SnapshotStep.tsx';
import { FlagList } from './PlanScreen.tsx';

export interface StepProps {
  runId: string;
  view: RunbookView;
  recorded: RecordedSteps | undefined;
  /** fetch the runbook again after an action changed it */
  refresh: () => void;
}

export function RunbookScreen({ runId, step }: { runId: string; step: StepId | null }) {
  const { data: view } = useCall('runbook:get', { runId }, 'Open the runbook', runId);
  const { data: recorded } = useCall('runbook:recorded', { runId }, 'Read the evidence on record', runId);
  const go = useApp((s) => s.go);
  const sandbox = useApp((s) => s.info?.workspace.kind === 'sandbox');
  const first = view?.steps.find((s) => s.status !== 'done' && s.status !== 'unavailable')?.id ?? 'close';
  // Opened without a step: land on the first one still to do, and stay there while it changes.
  useEffect(() => {
    if (view && step === null) go({ name: 'runbook', runId, step: first });
  }, [view, step, first, runId, go]);
  if (!view) return <p className="muted">Loading the runbook of {runId}…</p>;
  const selected = step ?? first;
  const props: StepProps = { runId, view, recorded, refresh: () => useApp.getState().bump(runId) };
  const run = view.run;
  const dryRunOnRecord = view.steps.find((s) => s.id === 'impact')?.status === 'done';
  return (
    <div className="runbook">
      <header className="card run-header">
        <div>
          <h1>
            Runbook <span className="mono">{run.runId}</span> <RunStatus status={run.status} />
            {sandbox && <span className="sandbox-badge small">Sandbox</span>}
          </h1>
          <p>
            <strong>{view.job.name}</strong> → {view.job.target} · {view.summary} · {String(view.plan.write_mode)} ·{' '}
            <TierBadge tier={view.tier} />
          </p>
          <p className="muted">
            Plan <span className="mono">{run.planHash.slice(0, 16)}…</span> · reason: {String(view.plan.reason) || '(none given)'} ·
            requested by {run.requestedBy ?? '–'}
          </p>
        </div>
        <details>
          <summary>Tier and red flags ({view.flags.length})</summary>
          <ul className="reasons">
            {view.tierReasons.map((r) => (
              <li key={r}>{r}</li>
            ))}
          </ul>
          <FlagList flags={view.flags.filter((f) => !(f.code === 'no-dry-run' && dryRunOnRecord))} dryRunOnRecord={dryRunOnRecord} />
        </details>
      </header>
      <div className="runbook-body">
        <StepList steps={view.steps} selected={selected} onSelect={(id) => go({ name: 'runbook', runId, step: id })} />
        <section className="card step-panel" aria-label={view.steps.find((s) => s.id === selected)?.title}>
          {panel(selected, props)}
        </section>
      </div>
    </div>
  );
}

function panel(id: StepId, props: StepProps) {
  switch (id) {
    case 'sanity':
      return <SanityStep {...props} />;
    case 'snapshot':
      return <SnapshotStep {...props} />;
    case 'impact':
      return <ImpactStep {...props} />;
    case 'signoff':
      return <SignoffStep {...props} />;
    case 'execute':
      return <ExecuteStep {...props} />;
    case 'compare':
      return <CompareStep {...props} />;
    case 'close':
      return <CloseStep {...props} />;
  }
}
