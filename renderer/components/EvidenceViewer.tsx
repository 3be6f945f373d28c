/** Opens one piece of evidence as it is on record: kind, time, its sha256, and the body as tables (the raw JSON behind a disclosure). */
import { useState } from 'react';
import { useCall } from '../hooks/useCall.ts';
import { when } from '../lib/format.ts';
import { JsonTables } from './JsonTables.tsx';
import { Modal } from './Modal.tsx';

export function EvidenceViewer({ id, onClose }: { id: number; onClose: () => void }) {
  const { data } = useCall('evidence:get', { id }, `Open evidence #${id}`);
  return (
    <Modal title={`Evidence #${id}${data ? ` — ${data.kind}` : ''}`} onClose={onClose}>
      {data ? (
        <>
          <dl className="facts">
            <dt>Kind</dt>
            <dd>{data.kind}</dd>
            <dt>Captured</dt>
            <dd>{when(data.createdAt)}</dd>
            <dt>sha256</dt>
            <dd className="mono">{data.bodySha256}</dd>
            <dt>Run</dt>
            <dd>{data.runId ?? '– (bound to the plan)'}</dd>
          </dl>
          <JsonTables value={data.body} />
        </>
      ) : (
        <p className="muted">Loading…</p>
      )}
    </Modal>
  );
}

/** "Evidence #12" as a button that opens it. */
export function EvidenceLink({ id }: { id: number | null }) {
  const [open, setOpen] = useState(false);
  if (id === null) return null;
  return (
    <>
      <button type="button" className="link" onClick={() => setOpen(true)}>
        Evidence #{id}
      </button>
      {open && <EvidenceViewer id={id} onClose={() => setOpen(false)} />}
    </>
  );
}
