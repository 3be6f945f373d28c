/**
 * Step 4, lead sign-off, bound to the plan as it stands (its hash) and its dry run. It first
 * restates what is approved (range, the change by key, red flags, the impact graph, downstream,
 * the snapshot) — the same as the request file says. A lead at this computer signs with their
 * own key and passphrase; a lead elsewhere signs the exported request and sends back the
 * signature file, imported here. Four eyes: never the operator.
 */
import { useState } from 'react';
import { ApprovalSummary } from '../components/ApprovalSummary.tsx';
import { DownstreamGraph } from '../components/DownstreamGraph.tsx';
import { DryRunQuestions } from '../components/DryRunQuestions.tsx';
import { ImpactGraph } from '../components/ImpactGraph.tsx';
import { Badge } from '../components/StatusBadge.tsx';
import { useCall } from '../hooks/useCall.ts';
import { download } from '../lib/download.ts';
import { when } from '../lib/format.ts';
import type { StepProps } from '../screens/RunbookScreen.tsx';
import { act } from '../api.ts';
import { useApp } from '../store/index.ts';
import { ActionButton, StepFrame } from './StepFrame.tsx';
import { useAction } from './useAction.ts';

export function SignoffStep(props: StepProps) {
  const status = useCall('runbook:signoffStatus', { runId: props.runId }, 'Read the sign-offs', props.runId);
  const identities = useCall('identities:list', {}, 'List the identities');
  const leads = identities.data?.filter((i) => i.role === 'lead' && i.keyHere) ?? [];
  // The Sandbox has its own lead (made when a scenario loads), so a trainee can practise this step.
  const sandbox = useApp((st) => st.info?.workspace.kind === 'sandbox');
  const training = useCall('training:list', sandbox ? {} : null, 'Read the Sandbox lead');
  const sandboxLead = training.data?.lead && leads.some((l) => l.name === training.data?.lead?.name) ? training.data.lead : null;
  const [signer, setSigner] = useState('');
  const [passphrase, setPassphrase] = useState('');
  const [comment, setComment] = useState('');
  const sign = useAction('runbook:signHere', 'Sign off', props.refresh);
  const importing = useAction('runbook:importSignature', 'Import the signature', props.refresh);
  const s = sign.result ?? importing.result ?? status.data;
  const chosen = signer || sandboxLead?.name || leads[0]?.name || '';
  // What the lead signs with the plan: the dry run's answers and the impact it derived.
  const dryRun = props.recorded?.dryRun ?? null;

  const onFile = async (file: File | undefined) => {
    if (!file) return;
    await importing.run({ runId: props.runId, text: await file.text() });
  };

  return (
    <StepFrame id="signoff" props={props}>
      {s && (
        <ApprovalSummary
          approval={s.approves}
          flags={dryRun ? <DryRunQuestions dryRun={dryRun} /> : undefined}
          graph={
            dryRun?.impact ? (
              <ImpactGraph graph={dryRun.impact} />
            ) : (
              <DownstreamGraph
                source={`job ${props.view.job.name}`}
                target={props.view.job.target}
                downstream={props.view.job.downstream}
              />
            )
          }
        />
      )}
      {s && (
        <dl className="facts">
          <dt>Plan signed</dt>
          <dd className="mono">{s.planHash}</dd>
          <dt>Required</dt>
          <dd>
            {s.required
              ? props.view.tier === 'manual'
                ? 'yes: manual tier'
                : 'yes: the plan overwrites closed partitions'
              : 'no: not manual tier (a sign-off may still be recorded)'}
          </dd>
          <dt>Sign-off</dt>
          <dd data-testid="signoff-valid">
            {s.valid ? (
              <>
                <Badge tone="ok">counts</Badge> {s.valid.signer}, {when(s.valid.signedAt)}: “{s.valid.comment}”
              </>
            ) : (
              'none that counts yet'
            )}
          </dd>
        </dl>
      )}
      {s && s.problems.length > 0 && (
        <ul className="reasons danger">
          {s.problems.map((p) => (
            <li key={p}>{p}</li>
          ))}
        </ul>
      )}
      <form
        className="subform"
        aria-label="Sign here"
        onSubmit={(e) => {
          e.preventDefault();
          void sign.run({ runId: props.runId, signer: chosen, passphrase, comment }).then((ok) => ok && setPassphrase(''));
        }}
      >
        <h3>A lead signs here</h3>
        {sandboxLead && (
          <p className="banner banner-warn" data-testid="sandbox-lead-hint">
            <span className="sandbox-badge small">Sandbox only</span> Training: sign as <strong>{sandboxLead.name}</strong> with the
            training passphrase <code>{sandboxLead.passphrase}</code>. A real lead signs with their own passphrase, never shown.
          </p>
        )}
        {leads.length === 0 ? (
          <p className="muted">
            No lead's key is on this computer. Create a lead identity on the Workspace screen, or use a signature file below.
          </p>
        ) : (
          <div className="row3">
            <div className="field">
              <label htmlFor="signer">Lead</label>
              <select id="signer" value={chosen} onChange={(e) => setSigner(e.target.value)}>
                {leads.map((l) => (
                  <option key={l.name} value={l.name}>
                    {l.name}
                  </option>
                ))}
              </select>
            </div>
            <div className="field">
              <label htmlFor="signer-passphrase">Lead's passphrase</label>
              <input
                id="signer-passphrase"
                type="password"
                autoComplete="off"
                value={passphrase}
                onChange={(e) => setPassphrase(e.target.value)}
              />
            </div>
            <div className="field">
              <label htmlFor="signer-comment">Comment</label>
              <input id="signer-comment" value={comment} placeholder="checked the dry run" onChange={(e) => setComment(e.target.value)} />
            </div>
          </div>
        )}
        <button type="submit" className="primary" disabled={sign.busy || leads.length === 0 || passphrase === ''}>
          {sign.busy ? 'Signing…' : 'Sign off this plan'}
        </button>
      </form>
      <div className="subform">
        <h3>A lead signs elsewhere</h3>
        <ActionButton
          primary={false}
          busy={false}
          onClick={() =>
            void act('runbook:signoffRequest', { runId: props.runId }, 'Export the sign-off request').then((f) => f && download(f))
          }
        >
          Export the sign-off request
        </ActionButton>{' '}
        <label className="file-button">
          Import a signature file…
          <input type="file" accept=".json,application/json" onChange={(e) => void onFile(e.target.files?.[0])} disabled={importing.busy} />
        </label>
      </div>
    </StepFrame>
  );
}
