/** The frame of every step: its title, state, what holds or blocks, its evidence, and its body. */
import type { ReactNode } from 'react';
import { STEP_IDS, type StepId } from '../../shared/runbookSteps.ts';
import { EvidenceLink } from '../components/EvidenceViewer.tsx';
import { Badge } from '../components/StatusBadge.tsx';
import { useApp } from '../store/index.ts';
import type { StepProps } from '../screens/RunbookScreen.tsx';

const TONE: Record<string, string> = {
  done: 'ok',
  ready: 'info',
  active: 'info',
  blocked: 'danger',
  locked: 'muted',
  unavailable: 'muted',
};

export function StepFrame({
  id,
  props,
  children,
  hideDetail = false,
}: {
  id: StepId;
  props: StepProps;
  children: ReactNode;
  hideDetail?: boolean;
}) {
  const step = props.view.steps.find((s) => s.id === id);
  const progress = useApp((s) => s.live[props.runId]?.step);
  const go = useApp((s) => s.go);
  if (!step) return null;
  const next = props.view.steps[STEP_IDS.indexOf(id) + 1];
  return (
    <div className={`step-frame step-frame-${step.status}`}>
      <header>
        <h2>
          {step.title} <Badge tone={TONE[step.status] ?? 'muted'}>{step.status}</Badge>
        </h2>
        <EvidenceLink id={step.evidenceId} />
      </header>
      {!hideDetail && (
        <p className={`step-detail${step.status === 'blocked' ? ' danger' : ''}`} data-testid="step-detail">
          {step.detail}
        </p>
      )}
      {step.status === 'locked' || step.status === 'unavailable' ? null : children}
      {step.status === 'done' && next && next.status !== 'locked' && (
        <p className="next">
          <button type="button" className="primary" onClick={() => go({ name: 'runbook', runId: props.runId, step: next.id })}>
            Continue to {next.title} →
          </button>
        </p>
      )}
      {progress && progress.done < progress.total && (
        <p className="muted" aria-live="polite">
          {progress.step}: {progress.done}/{progress.total} {progress.key ?? ''}
        </p>
      )}
    </div>
  );
}

/** A button that shows it is working while its action runs. */
export function ActionButton({
  busy,
  onClick,
  children,
  primary = true,
  disabled = false,
}: {
  busy: boolean;
  onClick: () => void;
  children: ReactNode;
  primary?: boolean;
  disabled?: boolean;
}) {
  return (
    <button type="button" className={primary ? 'primary' : undefined} disabled={busy || disabled} aria-busy={busy} onClick={onClick}>
      {busy ? 'Working…' : children}
    </button>
  );
}
