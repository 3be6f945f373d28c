/** Step 1: the job's quality rules on the source; each rule's value and threshold; a failing `fail` rule blocks. */
import { Badge } from '../components/StatusBadge.tsx';
import { when } from '../lib/format.ts';
import type { StepProps } from '../screens/RunbookScreen.tsx';
import { ActionButton, StepFrame } from './StepFrame.tsx';
import { useAction } from './useAction.ts';

export function SanityStep(props: StepProps) {
  const action = useAction('runbook:sanity', 'Run the source sanity check', props.refresh);
  const shown = action.result ?? props.recorded?.sanity ?? null;
  return (
    <StepFrame id="sanity" props={props}>
      <p>
        {props.view.job.qualityRules === 0
          ? 'This job declares no quality rules: the check records that nothing was measured.'
          : `${props.view.job.qualityRules} quality rule(s) from the job, measured over the plan's range.`}
      </p>
      <ActionButton busy={action.busy} onClick={() => void action.run({ runId: props.runId })}>
        {shown ? 'Check the source again' : 'Run the sanity checks'}
      </ActionButton>
      {shown && (
        <>
          <p className="muted">Measured {when(shown.createdAt)}.</p>
          {shown.blocked && (
            <p className="banner banner-danger">A fail-severity rule did not hold: the run is blocked until the source is healthy.</p>
          )}
          <table className="table" aria-label="Sanity check results">
            <thead>
              <tr>
                <th>Rule</th>
                <th className="num">Value</th>
                <th>Threshold</th>
                <th>Severity</th>
                <th>Result</th>
                <th>What was measured</th>
              </tr>
            </thead>
            <tbody>
              {shown.results.map((r) => (
                <tr key={r.rule} className={r.ok ? undefined : r.severity === 'fail' ? 'row-bad' : 'row-warn'}>
                  <td className="mono">{r.rule}</td>
                  <td className="num">{r.value ?? '–'}</td>
                  <td>{r.threshold}</td>
                  <td>{r.severity}</td>
                  <td>
                    {r.ok ? (
                      <Badge tone="ok">holds</Badge>
                    ) : (
                      <Badge tone={r.severity === 'fail' ? 'danger' : 'warn'}>{r.severity === 'fail' ? 'fails' : 'warns'}</Badge>
                    )}
                  </td>
                  <td>{r.message}</td>
                </tr>
              ))}
              {shown.results.length === 0 && (
                <tr>
                  <td colSpan={6} className="muted">
                    No rules to measure.
                  </td>
                </tr>
              )}
            </tbody>
          </table>
        </>
      )}
    </StepFrame>
  );
}
