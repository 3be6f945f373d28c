/**
 * Step 7: the run's summary recorded, and the incident note exported — its head signed with the
 * identity chosen here (so `verify` can vouch for it), the closing comment in it (Markdown and
 * HTML alike).
 */
import { useState } from 'react';
import { act } from '../api.ts';
import { DownstreamPlans } from '../components/DownstreamPlans.tsx';
import { useCall } from '../hooks/useCall.ts';
import { download } from '../lib/download.ts';
import type { StepProps } from '../screens/RunbookScreen.tsx';
import { useApp } from '../store/index.ts';
import { ActionButton, StepFrame } from './StepFrame.tsx';
import { useAction } from './useAction.ts';

const NOBODY = '';

export function CloseStep(props: StepProps) {
  const [comment, setComment] = useState('');
  const identities = useCall('identities:list', {}, 'List the identities');
  const operator = useApp((s) => s.info?.operator ?? '');
  const signers = identities.data?.filter((i) => i.keyHere) ?? [];
  const [signer, setSigner] = useState<string | null>(null);
  const [passphrase, setPassphrase] = useState('');
  const chosen = signer ?? signers.find((i) => i.role === 'operator')?.name ?? signers[0]?.name ?? NOBODY;
  const close = useAction('run:close', 'Close the runbook', props.refresh);
  const closed = props.view.steps.find((s) => s.id === 'close')?.status === 'done';
  const signing = chosen !== NOBODY ? { signer: chosen, passphrase } : {};
  const exportNote = (format: 'md' | 'html') =>
    void act('run:note', { runId: props.runId, format, ...signing }, 'Export the incident note').then((f) => f && download(f));
  const who = (
    <div className="row3">
      <div className="field">
        <label htmlFor="note-signer">Sign the note's head as</label>
        <select id="note-signer" value={chosen} onChange={(e) => setSigner(e.target.value)}>
          {signers.map((i) => (
            <option key={i.name} value={i.name}>
              {i.name} ({i.role})
            </option>
          ))}
          <option value={NOBODY}>nobody (the note will verify as UNTRUSTED)</option>
        </select>
      </div>
      {chosen !== NOBODY && (
        <div className="field">
          <label htmlFor="note-passphrase">{chosen}'s passphrase</label>
          <input
            id="note-passphrase"
            type="password"
            autoComplete="off"
            value={passphrase}
            onChange={(e) => setPassphrase(e.target.value)}
          />
        </div>
      )}
    </div>
  );
  const needsPassphrase = chosen !== NOBODY && passphrase === '';
  return (
    <StepFrame id="close" props={props}>
      {!closed && (
        <form
          className="subform"
          aria-label="Close the runbook"
          onSubmit={(e) => {
            e.preventDefault();
            void close.run({ runId: props.runId, comment, ...signing }).then((r) => r && setPassphrase(''));
          }}
        >
          <div className="field">
            <label htmlFor="close-comment">Closing comment — goes into the incident note, as written ({operator})</label>
            <textarea
              id="close-comment"
              rows={4}
              value={comment}
              placeholder="What was wrong, what the backfill fixed, what is left to do"
              onChange={(e) => setComment(e.target.value)}
            />
          </div>
          {signers.length === 0 ? (
            <p className="banner banner-warn">
              No identity's key is on this computer, so the note's head cannot be signed: `verify` will say UNTRUSTED. Create an identity on
              the Workspace screen to sign it.
            </p>
          ) : (
            who
          )}
          <button type="submit" className="primary" disabled={close.busy || needsPassphrase}>
            {close.busy
              ? 'Closing…'
              : chosen !== NOBODY
                ? `Close the runbook and sign the note as ${chosen}`
                : 'Close the runbook without signing the note'}
          </button>
        </form>
      )}
      {close.result && (
        <>
          <p className={close.result.signedBy ? 'banner banner-ok' : 'banner banner-warn'} data-testid="close-signed">
            {close.result.signedBy
              ? `The incident note's head is signed by ${close.result.signedBy}.`
              : "The incident note's head is not signed: verify will say UNTRUSTED."}
          </p>
          <dl className="facts" data-testid="close-summary">
            {close.result.summary.map(([k, v]) => (
              <div key={k} className="fact">
                <dt>{k}</dt>
                <dd>{v}</dd>
              </div>
            ))}
          </dl>
          <div className="controls">
            <ActionButton busy={false} onClick={() => close.result && download(close.result.note)}>
              Download the incident note (Markdown)
            </ActionButton>
            <ActionButton primary={false} busy={false} onClick={() => close.result && download(close.result.html)}>
              Download as HTML (print to PDF)
            </ActionButton>
          </div>
          <details open>
            <summary>Incident note preview</summary>
            <pre className="note" data-testid="note-preview">
              {close.result.note.text}
            </pre>
          </details>
        </>
      )}
      <DownstreamPlans runId={props.runId} />
      {closed && !close.result && (
        <div className="subform">
          <h3>Export the incident note again</h3>
          {signers.length > 0 && who}
          <div className="controls">
            <ActionButton primary={false} busy={false} disabled={needsPassphrase} onClick={() => exportNote('md')}>
              Export the incident note (Markdown)
            </ActionButton>
            <ActionButton primary={false} busy={false} disabled={needsPassphrase} onClick={() => exportNote('html')}>
              Export as HTML
            </ActionButton>
          </div>
        </div>
      )}
    </StepFrame>
  );
}
