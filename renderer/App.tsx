/**
 * The shell: header with the workspace (a loud "Sandbox" when training), navigation, the one
 * error panel, and the screen for the current view. Subscribes once to run:progress.
 */
import { useEffect } from 'react';
import { act, onEvent } from './api.ts';
import { ErrorPanel } from './components/ErrorPanel.tsx';
import { HistoryScreen } from './screens/HistoryScreen.tsx';
import { PlanScreen } from './screens/PlanScreen.tsx';
import { RunbookScreen } from './screens/RunbookScreen.tsx';
import { RunDetailScreen } from './screens/RunDetailScreen.tsx';
import { TrainingScreen } from './screens/TrainingScreen.tsx';
import { WorkspaceScreen } from './screens/WorkspaceScreen.tsx';
import { useApp } from './store/index.ts';
import { hashToView, type View } from './store/navSlice.ts';

/** Training shows only in the Sandbox. */
const TRAINING_TAB: { name: View['name']; label: string } = { name: 'training', label: 'Training' };
const TABS: { name: View['name']; label: string }[] = [
  { name: 'plan', label: 'New plan' },
  { name: 'history', label: 'History' },
  { name: 'workspace', label: 'Workspace' },
];

export function App() {
  const info = useApp((s) => s.info);
  const view = useApp((s) => s.view);
  const go = useApp((s) => s.go);

  useEffect(() => {
    void act('app:info', {}, 'Open the workspace').then((i) => {
      if (!i) return;
      useApp.getState().setInfo(i);
      // A trainee lands on the scenarios; a link to a screen (a hash) is honoured.
      if (i.workspace.kind === 'sandbox' && location.hash === '') useApp.getState().go({ name: 'training' });
    });
    const stop = onEvent('run:progress', (e) => useApp.getState().applyProgress(e));
    const onHash = () => useApp.setState({ view: hashToView(location.hash) });
    window.addEventListener('hashchange', onHash);
    return () => {
      stop();
      window.removeEventListener('hashchange', onHash);
    };
  }, []);

  const sandbox = info?.workspace.kind === 'sandbox';
  return (
    <div className={`app${sandbox ? ' is-sandbox' : ''}`}>
      <header className="topbar">
        <div className="brand">Backfill Runbook</div>
        {info && (
          <div className="workspace" title={info.workspace.dir}>
            {sandbox ? (
              <span className="sandbox-badge" role="status">
                Sandbox — training data, nothing real is changed
              </span>
            ) : (
              <span>
                Workspace <strong>{info.workspace.label}</strong>
              </span>
            )}
            {info.browserMode && <span className="tag">browser mode</span>}
          </div>
        )}
        <nav className="tabs" aria-label="Screens">
          {view.name === 'runbook' && (
            <button type="button" className="tab active" aria-current="page" title={`Runbook ${view.runId}`}>
              Runbook {view.runId}
            </button>
          )}
          {(sandbox ? [TRAINING_TAB, ...TABS] : TABS).map((t) => (
            <button
              key={t.name}
              type="button"
              className={`tab${view.name === t.name || (t.name === 'history' && view.name === 'run') ? ' active' : ''}`}
              aria-current={view.name === t.name ? 'page' : undefined}
              onClick={() => go({ name: t.name } as View)}
            >
              {t.label}
            </button>
          ))}
        </nav>
        {info && <div className="operator">Operator {info.operator}</div>}
      </header>
      <ErrorPanel />
      <main className="content">{screen(view)}</main>
    </div>
  );
}

function screen(view: View) {
  switch (view.name) {
    case 'plan':
      return <PlanScreen />;
    case 'runbook':
      return <RunbookScreen key={view.runId} runId={view.runId} step={view.step} />;
    case 'history':
      return <HistoryScreen />;
    case 'run':
      return <RunDetailScreen key={view.runId} runId={view.runId} />;
    case 'workspace':
      return <WorkspaceScreen />;
    case 'training':
      return <TrainingScreen />;
  }
}
