/**
 * Connections: those of the workspace's config file (read-only here) and those added in the
 * app. A password goes to main only and never comes back; where the OS offers no keychain,
 * saving one asks first and offers "this session only" instead.
 */
import { useState } from 'react';
import { act, call } from '../api.ts';
import { useCall } from '../hooks/useCall.ts';
import { useApp } from '../store/index.ts';
import { KeepSecretChoice, type Remember } from './KeepSecretChoice.tsx';

export function ConnectionsPanel() {
  const list = useCall('connections:list', {}, 'List the connections');
  const [form, setForm] = useState({ name: '', url: '', password: '', remember: 'save' as Remember });
  const [confirmPlain, setConfirmPlain] = useState(false);
  const [tested, setTested] = useState<Record<string, string>>({});

  const save = async (acceptPlainText: boolean) => {
    const r = await call('connections:save', {
      name: form.name,
      url: form.url,
      password: form.password || undefined,
      remember: form.remember,
      acceptPlainText,
    });
    if (!r.ok && r.error.code === 'plain-text-secret') return setConfirmPlain(true);
    setConfirmPlain(false);
    if (!r.ok) return useApp.getState().pushError(`Save connection ${form.name}`, r.error);
    setForm({ name: '', url: '', password: '', remember: 'save' });
    list.reload();
  };

  return (
    <section className="card" aria-label="Connections">
      <h2>Connections</h2>
      <table className="table">
        <thead>
          <tr>
            <th>Name</th>
            <th>Where</th>
            <th>Defined in</th>
            <th>Password</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {list.data?.map((c) => (
            <tr key={c.name}>
              <td>{c.name}</td>
              <td className="mono">{c.location}</td>
              <td>{c.source === 'config' ? 'backfill.config.yaml' : 'this app'}</td>
              <td>{c.password}</td>
              <td>
                <button
                  type="button"
                  className="link"
                  onClick={() =>
                    void call('connections:test', { name: c.name }).then((r) =>
                      setTested((t) => ({ ...t, [c.name]: r.ok ? `${r.value.ok ? '✓' : '✗'} ${r.value.message}` : r.error.message })),
                    )
                  }
                >
                  Test
                </button>
                {c.source === 'app' && (
                  <button
                    type="button"
                    className="link"
                    onClick={() =>
                      void act('connections:remove', { name: c.name }, `Remove connection ${c.name}`).then(() => list.reload())
                    }
                  >
                    Remove
                  </button>
                )}
                {tested[c.name] && <div className="small">{tested[c.name]}</div>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form
        className="subform"
        aria-label="Add a connection"
        onSubmit={(e) => {
          e.preventDefault();
          void save(false);
        }}
      >
        <h3>Add a PostgreSQL connection</h3>
        <div className="row3">
          <div className="field">
            <label htmlFor="c-name">Connection name</label>
            <input id="c-name" value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} placeholder="warehouse" />
          </div>
          <div className="field">
            <label htmlFor="c-url">URL (no password in it)</label>
            <input
              id="c-url"
              value={form.url}
              onChange={(e) => setForm({ ...form, url: e.target.value })}
              placeholder="postgres://backfill@db:5432/analytics"
            />
          </div>
          <div className="field">
            <label htmlFor="c-password">Password</label>
            <input
              id="c-password"
              type="password"
              autoComplete="off"
              value={form.password}
              onChange={(e) => setForm({ ...form, password: e.target.value })}
            />
          </div>
        </div>
        <KeepSecretChoice
          what="the password"
          name="remember"
          noun="password"
          remember={form.remember}
          onRemember={(remember) => setForm({ ...form, remember })}
          confirmPlain={confirmPlain}
          onSaveAnyway={() => void save(true)}
          onSessionOnly={() => {
            setForm({ ...form, remember: 'session' });
            setConfirmPlain(false);
          }}
        />
        <button type="submit" className="primary" disabled={!form.name || !form.url}>
          Save the connection
        </button>
      </form>
    </section>
  );
}
