/**
 * A run held after its canary (shared/canary.ts): the canary partitions before → after — by key
 * against the snapshot where the target measured it, else rows and sums — and the operator's
 * two ways on: continue the run, or abandon it for good.
 */
import { useState } from 'react';
import type { CanaryView } from '../../shared/contractTypes.ts';
import { describeKeyChange, describeMeasure } from '../../shared/keyChange.ts';
import { useAction } from '../steps/useAction.ts';
import { ActionButton } from '../steps/StepFrame.tsx';

const show = (m: Record<string, string | number | null> | null, k: string) => (m === null ? '–' : String(m[k] ?? '–'));

export function CanaryPanel({ runId, canary, held, onChange }: { runId: string; canary: CanaryView; held: boolean; onChange: () => void }) {
  const go = useAction('run:start', 'Continue the run', onChange);
  const abandon = useAction('run:abandon', 'Abandon the run', onChange);
  const [reason, setReason] = useState('');
  return (
    <section className="canary" aria-label="Canary" data-testid="canary">
      <h3>
        Canary: the first {canary.size} partition(s), written, reconciled and compared {held ? '— the run waits for you' : ''}
      </h3>
      <table>
        <thead>
          <tr>
            <th>Partition</th>
            <th>Compared with</th>
            <th>Before → after</th>
          </tr>
        </thead>
        <tbody>
          {canary.partitions.map((p) => (
            <tr key={p.key}>
              <td className="mono">{p.key}</td>
              <td>{p.basis}</td>
              <td>
                {p.keys ? (
                  <>
                    {describeKeyChange(p.keys)}
                    {p.keys.measures.map((m) => (
                      <div key={m.column} className="muted">
                        {describeMeasure(m)}
                      </div>
                    ))}
                  </>
                ) : (
                  Object.keys(p.after)
                    .filter((k) => k !== 'published_by')
                    .map((k) => `${k} ${show(p.before, k)} → ${show(p.after, k)}`)
                    .join(', ')
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {held && (
        <div className="controls">
          <ActionButton busy={go.busy} onClick={() => void go.run({ runId })}>
            Continue the run
          </ActionButton>
          <input
            aria-label="Why abandon"
            placeholder="why abandon (kept in the note)"
            value={reason}
            onChange={(e) => setReason(e.target.value)}
          />
          <ActionButton primary={false} busy={abandon.busy} onClick={() => void abandon.run({ runId, reason })}>
            Abandon the run
          </ActionButton>
        </div>
      )}
    </section>
  );
}
