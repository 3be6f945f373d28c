/**
 * Step 5, execute: a live partition grid, progress, rows per minute, ETA and checkpoint age,
 * and pause / resume / stop — all at a partition boundary. When a stop condition fires, it
 * says which and why; the run stays resumable. While a signal is over its level the run is
 * throttled: it says which signal, its value against its level and for how long, and a small
 * chart draws the signal over time against its levels, beside rows per minute.
 */
import { useState } from 'react';
import type { CalendarUnit } from '../lib/calendar.ts';
import { CanaryPanel } from '../components/CanaryPanel.tsx';
import { PartitionGrid } from '../components/PartitionGrid.tsx';
import { useNow } from '../hooks/useCall.ts';
import { duration, int, when } from '../lib/format.ts';
import type { StepProps } from '../screens/RunbookScreen.tsx';
import { useApp } from '../store/index.ts';
import { SignalPanel, ThrottleBanner, throttledSummary } from './ExecuteSignals.tsx';
import { ActionButton, StepFrame } from './StepFrame.tsx';
import { useAction } from './useAction.ts';

export function ExecuteStep(props: StepProps) {
  const { view } = props;
  const run = view.run;
  const live = useApp((s) => s.live[props.runId]);
  const now = useNow(1000);
  // As the CLI's --reprocess: what a resume (re)does; "all" redoes published partitions too.
  const [reprocess, setReprocess] = useState<'missing' | 'failed' | 'all'>('missing');
  const start = useAction('run:start', run.status === 'planned' ? 'Start the run' : 'Resume the run', props.refresh);
  const pause = useAction('run:pause', 'Pause the run');
  const stop = useAction('run:stop', 'Stop the run');
  const stats = view.live ? live?.stats : undefined;
  const published = stats?.published ?? run.partitionsPublished;
  const failed = stats?.failed ?? run.partitionsFailed;
  const total = run.partitionsTotal;
  const pct = total === 0 ? 0 : Math.round((published / total) * 100);
  const checkpoint = stats?.lastCheckpointAt ?? null;
  const stopping = stats?.stop ?? null;

  return (
    // The banner says why it stopped, so the step's one-line state would only repeat it.
    <StepFrame
      id="execute"
      props={props}
      hideDetail={!view.live && ['halted', 'paused', 'running', 'canary', 'abandoned', 'failed'].includes(run.status)}
    >
      <div className="controls">
        {!view.live && !['succeeded', 'canary', 'abandoned'].includes(run.status) && (
          <ActionButton
            busy={start.busy}
            onClick={() => void start.run({ runId: props.runId, ...(run.status === 'planned' ? {} : { reprocess }) })}
          >
            {run.status === 'planned' ? 'Start executing' : reprocess === 'missing' ? 'Resume' : `Resume and redo ${reprocess} partitions`}
          </ActionButton>
        )}
        {!view.live && run.status === 'succeeded' && reprocess !== 'missing' && (
          <ActionButton primary={false} busy={start.busy} onClick={() => void start.run({ runId: props.runId, reprocess })}>
            Redo {reprocess} partitions
          </ActionButton>
        )}
        {!view.live && !['planned', 'canary', 'abandoned'].includes(run.status) && (
          <div className="field inline-field">
            <label htmlFor="reprocess">Redo</label>
            <select id="reprocess" value={reprocess} onChange={(e) => setReprocess(e.target.value as typeof reprocess)}>
              <option value="missing">missing partitions only (resume)</option>
              <option value="failed">failed partitions</option>
              <option value="all">every partition (reprocess all)</option>
            </select>
          </div>
        )}
        {view.live && (
          <>
            <ActionButton
              primary={false}
              busy={pause.busy}
              disabled={stopping !== null}
              onClick={() => void pause.run({ runId: props.runId })}
            >
              Pause at the next boundary
            </ActionButton>
            <ActionButton
              primary={false}
              busy={stop.busy}
              disabled={stopping !== null}
              onClick={() => void stop.run({ runId: props.runId })}
            >
              Stop at the next boundary
            </ActionButton>
          </>
        )}
      </div>
      <StopBanner status={run.status} live={view.live} haltReason={run.haltReason} stopping={stopping} />
      {view.live && stopping === null && stats?.throttle && <ThrottleBanner state={stats.throttle} now={now} />}
      {props.recorded?.canary && (
        <CanaryPanel
          runId={props.runId}
          canary={props.recorded.canary}
          held={!view.live && run.status === 'canary'}
          onChange={props.refresh}
        />
      )}
      <div
        className="progress"
        role="progressbar"
        aria-label="Partitions published"
        aria-valuemin={0}
        aria-valuemax={total}
        aria-valuenow={published}
      >
        <div className="progress-bar" style={{ width: `${pct}%` }} />
        {failed > 0 && <div className="progress-bar failed" style={{ width: `${total === 0 ? 0 : (failed / total) * 100}%` }} />}
      </div>
      <dl className="metrics" data-testid="execute-metrics">
        <div>
          <dt>Published</dt>
          <dd>
            {int(published)} / {int(total)} ({pct}%)
          </dd>
        </div>
        <div>
          <dt>Failed</dt>
          <dd className={failed > 0 ? 'danger' : undefined}>{int(failed)}</dd>
        </div>
        <div>
          <dt>Rows written</dt>
          <dd>{int(stats?.rows ?? run.rowsWritten)}</dd>
        </div>
        <div>
          <dt>Rows per minute</dt>
          <dd>{int(stats?.rowsPerMinute)}</dd>
        </div>
        <div>
          <dt>ETA</dt>
          <dd>{view.live ? duration(stats?.etaSeconds) : '–'}</dd>
        </div>
        <div>
          <dt>Checkpoint age</dt>
          <dd title={checkpoint ?? undefined}>{checkpoint ? duration((now - Date.parse(checkpoint)) / 1000) : '–'}</dd>
        </div>
        <div>
          <dt>In flight</dt>
          <dd>{stats && stats.running.length > 0 ? stats.running.join(', ') : '–'}</dd>
        </div>
        <div>
          <dt>Throttled</dt>
          <dd className={stats?.throttle ? 'down' : undefined}>{throttledSummary(live?.episodes ?? [], now)}</dd>
        </div>
      </dl>
      {live && <SignalPanel live={live} now={now} running={view.live} />}
      <PartitionGrid
        unit={(run.unit ?? 'day') as CalendarUnit}
        cells={view.partitions}
        overlay={live?.cells}
        label="Partitions of this run"
      />
      {live && live.log.length > 0 && (
        <details className="log" open={view.live}>
          <summary>Executor log ({live.log.length})</summary>
          <ol>
            {live.log.slice(0, 60).map((l, i) => (
              <li key={`${l.at}-${i}`} className={`log-${l.tone}`}>
                <span className="muted">{when(l.at).slice(11, 19)}</span> {l.text}
              </li>
            ))}
          </ol>
        </details>
      )}
    </StepFrame>
  );
}

function StopBanner({
  status,
  live,
  haltReason,
  stopping,
}: {
  status: string;
  live: boolean;
  haltReason: string | null;
  stopping: { reason: string; kind: 'operator' | 'condition' } | null;
}) {
  if (live && stopping) {
    return (
      <p className={`banner ${stopping.kind === 'condition' ? 'banner-danger' : 'banner-warn'}`} role="status">
        {stopping.kind === 'condition' ? 'Stop condition fired' : 'Stopping'}: {stopping.reason}. The partition in flight finishes or rolls
        back; the run stays resumable.
      </p>
    );
  }
  if (live) return null;
  switch (status) {
    case 'halted':
      return (
        <p className="banner banner-danger" role="status" data-testid="stop-reason">
          Halted: {haltReason ?? 'a stop condition fired'}. Nothing published is lost; resume when it is safe.
        </p>
      );
    case 'paused':
      return (
        <p className="banner banner-warn" role="status" data-testid="stop-reason">
          Paused: {haltReason ?? 'by the operator'}. Resume continues with the next partition.
        </p>
      );
    case 'running':
      return (
        <p className="banner banner-warn" role="status" data-testid="stop-reason">
          Interrupted: no executor is driving this run (the app or its engine stopped). Resume asks the target which partitions were
          committed and continues from there.
        </p>
      );
    case 'canary':
      return (
        <p className="banner banner-warn" role="status" data-testid="stop-reason">
          Held after its canary: read the comparison below, then continue the run or abandon it.
        </p>
      );
    case 'abandoned':
      return (
        <p className="banner banner-danger" role="status" data-testid="stop-reason">
          {haltReason ?? 'Abandoned after its canary'}. Nothing more is written; restore the canary partitions from the snapshot if needed.
        </p>
      );
    case 'failed':
      return (
        <p className="banner banner-danger" role="status" data-testid="stop-reason">
          Finished with problems: {haltReason ?? 'some partitions failed'}. Resume retries the failed partitions.
        </p>
      );
    default:
      return null;
  }
}
