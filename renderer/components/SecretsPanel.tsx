/**
 * Secrets for what the workspace's files name by an environment variable — a probe's token
 * (bearer_token_env), a notify target's URL (url_env), a header's value (headers_env). A value
 * goes to main only and never comes back; the list shows names and how each is kept.
 */
import { useState } from 'react';
import { act, call } from '../api.ts';
import { useCall } from '../hooks/useCall.ts';
import { useApp } from '../store/index.ts';
import { KeepSecretChoice, type Remember } from './KeepSecretChoice.tsx';

const STORAGE = {
  os: 'saved, encrypted by the OS keychain',
  'plain-text': 'saved, encrypted with a key on disk',
  session: 'this session only',
};

export function SecretsPanel() {
  const list = useCall('secrets:list', {}, 'List the saved secrets');
  const [form, setForm] = useState({ name: '', value: '', remember: 'save' as Remember });
  const [confirmPlain, setConfirmPlain] = useState(false);

  const save = async (acceptPlainText: boolean) => {
    const r = await call('secrets:save', { name: form.name, value: form.value, remember: form.remember, acceptPlainText });
    if (!r.ok && r.error.code === 'plain-text-secret') return setConfirmPlain(true);
    setConfirmPlain(false);
    if (!r.ok) return useApp.getState().pushError(`Save secret ${form.name}`, r.error);
    setForm({ name: '', value: '', remember: 'save' });
    list.reload();
  };

  return (
    <section className="card" aria-label="Secrets">
      <h2>Secrets for probes and notifications</h2>
      <p className="muted small">
        Files name a variable instead of a secret (<code>bearer_token_env: PROM_TOKEN</code>, <code>url_env: SLACK_WEBHOOK_URL</code>
        ). Save its value here and runs started in this app read it under that name.
      </p>
      {list.data && list.data.length > 0 ? (
        <table className="table" aria-label="Saved secrets">
          <thead>
            <tr>
              <th>Name</th>
              <th>Kept</th>
              <th>Updated</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {list.data.map((s) => (
              <tr key={s.name}>
                <td className="mono">{s.name}</td>
                <td>{STORAGE[s.storage]}</td>
                <td>{s.updatedAt ?? '–'}</td>
                <td>
                  <button
                    type="button"
                    className="link"
                    onClick={() => void act('secrets:remove', { name: s.name }, `Remove secret ${s.name}`).then(() => list.reload())}
                  >
                    Remove
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p className="muted">No secrets saved in the app.</p>
      )}
      <form
        className="subform"
        aria-label="Save a secret"
        onSubmit={(e) => {
          e.preventDefault();
          void save(false);
        }}
      >
        <div className="row2">
          <div className="field">
            <label htmlFor="s-name">Variable name</label>
            <input
              id="s-name"
              value={form.name}
              onChange={(e) => setForm({ ...form, name: e.target.value })}
              placeholder="SLACK_WEBHOOK_URL"
            />
          </div>
          <div className="field">
            <label htmlFor="s-value">Value</label>
            <input
              id="s-value"
              type="password"
              autoComplete="off"
              value={form.value}
              onChange={(e) => setForm({ ...form, value: e.target.value })}
            />
          </div>
        </div>
        <KeepSecretChoice
          what="it"
          name="s-remember"
          noun="secret"
          remember={form.remember}
          onRemember={(remember) => setForm({ ...form, remember })}
          confirmPlain={confirmPlain}
          onSaveAnyway={() => void save(true)}
          onSessionOnly={() => {
            setForm({ ...form, remember: 'session' });
            setConfirmPlain(false);
          }}
        />
        <button type="submit" className="primary" disabled={form.name === '' || form.value === ''}>
          Save the secret
        </button>
      </form>
    </section>
  );
}
