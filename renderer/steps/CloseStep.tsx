/** Step 7: the run's summary, recorded, and the incident note exported (Markdown or HTML). */
import { useState } from 'react';
import { act } from '../api.ts';
import { DownstreamPlans } from '../components/DownstreamPlans.tsx';
import { download } from '../lib/download.ts';
import type { StepProps } from '../screens/RunbookScreen.tsx';
import { ActionButton, StepFrame } from './StepFrame.tsx';
import { useAction } from './useAction.ts';

export function CloseStep(props: StepProps) {
  const [comment, setComment] = useState('');
  const close = useAction('run:close', 'Close the runbook', props.refresh);
  const closed = props.view.steps.find((s) => s.id === 'close')?.status === 'done';
  const exportNote = (format: 'md' | 'html') =>
    void act('run:note', { runId: props.runId, format }, 'Export the incident note').then((f) => f && download(f));
  return (
    <StepFrame id="close" props={props}>
      {!closed && (
        <div className="subform">
          <div className="field">
            <label htmlFor="close-comment">Closing comment (goes into the incident note)</label>
            <textarea id="close-comment" rows={2} value={comment} onChange={(e) => setComment(e.target.value)} />
          </div>
          <ActionButton busy={close.busy} onClick={() => void close.run({ runId: props.runId, comment })}>
            Close the runbook and write the incident note
          </ActionButton>
        </div>
      )}
      {close.result && (
        <dl className="facts" data-testid="close-summary">
          {close.result.summary.map(([k, v]) => (
            <div key={k} className="fact">
              <dt>{k}</dt>
              <dd>{v}</dd>
            </div>
          ))}
        </dl>
      )}
      <div className="controls">
        <ActionButton primary={false} busy={false} onClick={() => exportNote('md')}>
          Export the incident note (Markdown)
        </ActionButton>
        <ActionButton primary={false} busy={false} onClick={() => exportNote('html')}>
          Export as HTML
        </ActionButton>
      </div>
      <DownstreamPlans runId={props.runId} />
      {close.result && (
        <details open>
          <summary>Incident note preview</summary>
          <pre className="note" data-testid="note-preview">
            {close.result.note.text}
          </pre>
        </details>
      )}
    </StepFrame>
  );
}
