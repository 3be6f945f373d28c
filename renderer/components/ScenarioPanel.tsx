/**
 * The loaded scenario: its story, what "fixed" means, the steps, the Sandbox's lead for the
 * sign-off, a shortcut to its plan, and "Check my work" — each check of the scenario's own
 * definition of fixed, ✓ or ✗ with what was missed.
 */
import type { SandboxLeadView, ScenarioView } from '../../shared/contractTypes.ts';
import { when } from '../lib/format.ts';
import { scenarioDraft } from '../lib/scenarioPlan.ts';
import { useAction } from '../steps/useAction.ts';
import { useApp } from '../store/index.ts';

export function ScenarioPanel({ scenario, loadedAt, lead }: { scenario: ScenarioView; loadedAt: string; lead: SandboxLeadView | null }) {
  const check = useAction('training:check', 'Check my work');
  const verdict = check.result;
  const startPlan = () => {
    useApp.getState().editDraft(scenarioDraft(scenario, loadedAt));
    useApp.getState().go({ name: 'plan' });
  };
  const failed = verdict?.checks.filter((c) => !c.ok).length ?? 0;
  return (
    <section className="card scenario-panel" aria-label="Scenario">
      <h2>
        Scenario {scenario.id}: {scenario.title}
      </h2>
      <p className="muted">Loaded {when(loadedAt)}. Only what you do from then on counts.</p>
      <p>{scenario.story}</p>
      <div className="fixed-means" data-testid="fixed-means">
        <strong>Fixed means:</strong> {scenario.fixed}
      </div>
      <dl className="facts">
        <dt>Job</dt>
        <dd className="mono">{scenario.job}</dd>
        <dt>Range</dt>
        <dd>
          <span className="mono">{scenario.range.from}</span> to <span className="mono">{scenario.range.to}</span> (exclusive)
        </dd>
      </dl>
      {scenario.steps.length > 0 && (
        <>
          <h3>Steps</h3>
          <p className="muted small">
            In the app: start the plan below, then walk the runbook's steps in order. The same work on the command line:
          </p>
          <ol className="scenario-steps">
            {scenario.steps.map((s) => (
              <li key={s}>
                <code>{s}</code>
              </li>
            ))}
          </ol>
        </>
      )}
      {lead && (
        <div className="sandbox-lead" data-testid="sandbox-lead">
          <h3>
            The Sandbox's lead, for the sign-off <span className="sandbox-badge small">Sandbox only</span>
          </h3>
          <p>
            Sign as <strong className="mono">{lead.name}</strong> with the training passphrase{' '}
            <code data-testid="lead-passphrase">{lead.passphrase}</code>.
          </p>
          <p className="muted small">
            Shown on purpose: this lead exists only in the Sandbox so you can practise the four-eyes sign-off. A real lead's passphrase is
            never shared or shown.
          </p>
          {lead.problem && <p className="banner banner-warn">{lead.problem}</p>}
        </div>
      )}
      <p className="controls">
        <button type="button" className="primary" onClick={startPlan}>
          Start this scenario's plan
        </button>
        <button type="button" disabled={check.busy} aria-busy={check.busy} onClick={() => void check.run({ id: scenario.id })}>
          {check.busy ? 'Checking…' : 'Check my work'}
        </button>
      </p>
      {verdict && (
        <div aria-live="polite" data-testid="verdict">
          <p className={`banner ${verdict.ok ? 'banner-ok' : 'banner-danger'}`} data-testid="verdict-banner">
            {verdict.ok
              ? 'FIXED — every check holds.'
              : `Not fixed yet — ${failed} of ${verdict.checks.length} checks fail. What you missed:`}
          </p>
          <ul className="checks" aria-label="Checks">
            {verdict.checks.map((c) => (
              <li key={c.name} className={c.ok ? 'check-ok' : 'check-fail'}>
                <span className="check-mark" aria-hidden="true">
                  {c.ok ? '✓' : '✗'}
                </span>{' '}
                <strong>{c.name}</strong>: {c.detail}
              </li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}
