/** The seven steps in order, each with its state; a locked step cannot be opened. */
import type { StepId, StepView } from '../../shared/runbookSteps.ts';

// Plain glyphs every system font has (an emoji lock renders as a box on a bare Linux).
const ICON: Record<StepView['status'], string> = { done: '✓', ready: '→', active: '●', blocked: '!', locked: '·', unavailable: '–' };

export function StepList({ steps, selected, onSelect }: { steps: StepView[]; selected: StepId; onSelect: (id: StepId) => void }) {
  return (
    <nav aria-label="Runbook steps">
      <ol className="steps">
        {steps.map((s, i) => (
          <li key={s.id}>
            <button
              type="button"
              className={`step step-${s.status}${s.id === selected ? ' selected' : ''}`}
              aria-current={s.id === selected ? 'step' : undefined}
              disabled={s.status === 'locked'}
              onClick={() => onSelect(s.id)}
              title={s.detail}
            >
              <span className="step-icon" aria-hidden="true">
                {ICON[s.status]}
              </span>
              <span className="step-text">
                <span className="step-title">
                  {i + 1}. {s.title}
                </span>
                <span className="step-state">{s.status}</span>
              </span>
            </button>
          </li>
        ))}
      </ol>
    </nav>
  );
}
