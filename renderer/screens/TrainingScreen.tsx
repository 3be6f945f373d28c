/**
 * Training, in the Sandbox only: pick a scenario, load it (after a confirmation — loading
 * resets the Sandbox's data), then repair it with the normal plan → runbook flow and check the
 * scenario's own definition of "fixed". The engine refuses all of it on a folder workspace.
 */
import { useState } from 'react';
import type { ScenarioView } from '../../shared/contractTypes.ts';
import { act } from '../api.ts';
import { Modal } from '../components/Modal.tsx';
import { ScenarioPanel } from '../components/ScenarioPanel.tsx';
import { Badge } from '../components/StatusBadge.tsx';
import { useCall } from '../hooks/useCall.ts';
import { useApp } from '../store/index.ts';

/** refetch key for the scenario list (useCall's versions) */
export const TRAINING_VERSION = 'training:scenarios';

export function TrainingScreen() {
  const sandbox = useApp((s) => s.info?.workspace.kind === 'sandbox');
  const go = useApp((s) => s.go);
  const training = useCall('training:list', sandbox ? {} : null, 'List the training scenarios', TRAINING_VERSION);
  const [confirm, setConfirm] = useState<ScenarioView | null>(null);
  const [loading, setLoading] = useState(false);

  if (!sandbox) {
    return (
      <section className="card" aria-label="Training">
        <h1>Training</h1>
        <p>Training scenarios run in the Sandbox only: loading one resets its data, so it is never offered on a real workspace.</p>
        <button type="button" onClick={() => go({ name: 'workspace' })}>
          Go to the Workspace screen (“Use the Sandbox”)
        </button>
      </section>
    );
  }

  const load = async (sc: ScenarioView) => {
    setLoading(true);
    const loaded = await act('training:load', { id: sc.id }, `Load scenario ${sc.id}`);
    setLoading(false);
    setConfirm(null);
    if (loaded) useApp.getState().bump(TRAINING_VERSION);
  };

  const data = training.data;
  const current = data?.current ?? null;
  const shown = current ? data?.scenarios.find((s) => s.id === current.id) : undefined;
  return (
    <div className="training-screen">
      <section className="card" aria-label="Training scenarios">
        <h1>
          Training <span className="sandbox-badge">Sandbox</span>
        </h1>
        <p className="muted">
          Each scenario loads realistic data with a defect to repair. Repair it the way you would at work — plan, then the runbook's seven
          steps — and check your work at the end.
        </p>
        <ol className="scenarios">
          {data?.scenarios.map((sc) => (
            <li
              key={sc.id}
              className={`scenario${sc.unavailable ? ' unavailable' : ''}${current?.id === sc.id ? ' current' : ''}`}
              aria-label={`Scenario ${sc.id}: ${sc.title}`}
            >
              <h3>
                {sc.id}. {sc.title} {current?.id === sc.id && <Badge tone="info">loaded</Badge>}
              </h3>
              <p>{sc.story}</p>
              {sc.unavailable ? (
                <p className="muted" data-testid="unavailable">
                  Not available in this build: {sc.unavailable}
                </p>
              ) : (
                <button type="button" onClick={() => setConfirm(sc)} disabled={loading}>
                  {current?.id === sc.id ? `Load scenario ${sc.id} again` : `Load scenario ${sc.id}`}
                </button>
              )}
            </li>
          ))}
        </ol>
      </section>
      {shown && current ? (
        <ScenarioPanel key={`${shown.id}-${current.loadedAt}`} scenario={shown} loadedAt={current.loadedAt} lead={data?.lead ?? null} />
      ) : (
        <section className="card scenario-panel" aria-label="Scenario">
          <h2>No scenario loaded</h2>
          <p className="muted">Load one on the left. Its story, what “fixed” means and the steps appear here, with a check of your work.</p>
        </section>
      )}
      {confirm && (
        <Modal title={`Load scenario ${confirm.id}?`} onClose={() => !loading && setConfirm(null)}>
          <p>
            Loading <strong>{confirm.title}</strong> resets the Sandbox: its warehouse goes back to the generated training data, then this
            scenario's defect is injected.
          </p>
          <p className="muted">
            Runs already in the Sandbox's ledger stay in History, but only what you do after loading counts when you check your work.
            Nothing outside the Sandbox is touched.
          </p>
          <p className="controls">
            <button type="button" className="primary" disabled={loading} aria-busy={loading} onClick={() => void load(confirm)}>
              {loading ? 'Resetting the Sandbox…' : `Reset the Sandbox and load scenario ${confirm.id}`}
            </button>
            <button type="button" disabled={loading} onClick={() => setConfirm(null)}>
              Cancel
            </button>
          </p>
        </Modal>
      )}
    </div>
  );
}
