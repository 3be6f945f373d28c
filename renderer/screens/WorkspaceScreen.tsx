/**
 * The workspace: which folder (or the Sandbox), its connections, and the signing identities.
 * Passwords go to main only and never come back; where the OS offers no keychain, saving one
 * asks first and offers "this session only" instead.
 */
import { useState } from 'react';
import { act } from '../api.ts';
import { ConnectionsPanel } from '../components/ConnectionsPanel.tsx';
import { SecretsPanel } from '../components/SecretsPanel.tsx';
import { IdentitiesPanel } from '../components/IdentitiesPanel.tsx';
import { useApp } from '../store/index.ts';

export function WorkspaceScreen() {
  const info = useApp((s) => s.info);
  const [dir, setDir] = useState('');
  const switchTo = async (next: Promise<unknown>) => {
    if ((await next) !== undefined) {
      const i = await act('app:info', {}, 'Open the workspace');
      if (i) useApp.getState().setInfo(i);
      location.reload();
    }
  };
  return (
    <div className="workspace-screen">
      <section className="card" aria-label="Workspace">
        <h1>Workspace</h1>
        {info && (
          <dl className="facts">
            <dt>Open</dt>
            <dd>{info.workspace.kind === 'sandbox' ? <span className="sandbox-badge">Sandbox</span> : info.workspace.label}</dd>
            <dt>Folder</dt>
            <dd className="mono">{info.workspace.dir}</dd>
            <dt>Ledger</dt>
            <dd className="mono">{info.workspace.dbFile}</dd>
            <dt>Jobs</dt>
            <dd className="mono">{info.workspace.jobsDir}</dd>
            <dt>Passwords kept by</dt>
            <dd>
              {info.secretStorage === 'os'
                ? 'the system keychain'
                : info.secretStorage === 'plain-text'
                  ? 'a key stored in plain text (no keychain on this system)'
                  : 'nobody: passwords last for this session only'}
            </dd>
          </dl>
        )}
        <form
          className="row-inline"
          onSubmit={(e) => {
            e.preventDefault();
            void switchTo(act('workspace:open', { dir }, 'Open the workspace folder'));
          }}
        >
          <div className="field grow">
            <label htmlFor="ws-dir">Open a workspace folder (holds backfill.config.yaml and jobs/)</label>
            <input id="ws-dir" value={dir} onChange={(e) => setDir(e.target.value)} placeholder="/home/me/backfills" />
          </div>
          <button type="submit" disabled={dir.trim() === ''}>
            Open
          </button>
          <button type="button" onClick={() => void switchTo(act('workspace:sandbox', {}, 'Open the Sandbox'))}>
            Use the Sandbox
          </button>
        </form>
      </section>
      <ConnectionsPanel />
      <SecretsPanel />
      <IdentitiesPanel />
    </div>
  );
}
