/** Signing identities: a lead signs off plans with their own passphrase-protected key. */
import { useState } from 'react';
import { act } from '../api.ts';
import { useCall } from '../hooks/useCall.ts';
import { Badge } from './StatusBadge.tsx';

export function IdentitiesPanel() {
  const list = useCall('identities:list', {}, 'List the identities');
  const [form, setForm] = useState({ name: '', role: 'lead' as 'lead' | 'operator', passphrase: '' });
  return (
    <section className="card" aria-label="Signing identities">
      <h2>Signing identities</h2>
      <p className="muted">
        A lead signs off plans with their own key, protected by their passphrase. The four-eyes rule: the signer is never the operator who
        executes.
      </p>
      <ul className="plain">
        {list.data?.map((i) => (
          <li key={i.name}>
            <strong>{i.name}</strong> <Badge tone={i.role === 'lead' ? 'info' : 'muted'}>{i.role}</Badge>{' '}
            <span className="mono small">{i.fingerprint.slice(0, 16)}</span> {i.keyHere ? '· key on this computer' : '· public key only'}
          </li>
        ))}
        {list.data?.length === 0 && <li className="muted">No identities yet.</li>}
      </ul>
      <form
        className="subform"
        aria-label="Create an identity"
        onSubmit={(e) => {
          e.preventDefault();
          void act('identities:create', form, `Create identity ${form.name}`).then((r) => {
            if (r) {
              setForm({ name: '', role: 'lead', passphrase: '' });
              list.reload();
            }
          });
        }}
      >
        <div className="row3">
          <div className="field">
            <label htmlFor="id-name">Identity name</label>
            <input id="id-name" value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} placeholder="lead" />
          </div>
          <div className="field">
            <label htmlFor="id-role">Role</label>
            <select id="id-role" value={form.role} onChange={(e) => setForm({ ...form, role: e.target.value as 'lead' | 'operator' })}>
              <option value="lead">lead</option>
              <option value="operator">operator</option>
            </select>
          </div>
          <div className="field">
            <label htmlFor="id-passphrase">Passphrase (8+ characters)</label>
            <input
              id="id-passphrase"
              type="password"
              autoComplete="new-password"
              value={form.passphrase}
              onChange={(e) => setForm({ ...form, passphrase: e.target.value })}
            />
          </div>
        </div>
        <button type="submit" className="primary" disabled={!form.name || form.passphrase.length < 8}>
          Create the identity
        </button>
      </form>
    </section>
  );
}
