/**
 * A backfill plan, typed in a form that shows as you type the partitions it covers, its
 * automation tier and its red flags (lib/planDraft.ts, the engine's own pure rules).
 */
import { useEffect, useMemo, useState, type ReactNode } from 'react';
import type { JobDetail } from '../../shared/contractTypes.ts';
import { canarySize } from '../../shared/canary.ts';
import type { RedFlag } from '../../shared/redFlags.ts';
import { act } from '../api.ts';
import { Badge, TierBadge } from '../components/StatusBadge.tsx';
import { useCall } from '../hooks/useCall.ts';
import { previewPlan, type PlanDraft } from '../lib/planDraft.ts';
import { useApp } from '../store/index.ts';

export function PlanScreen() {
  const draft = useApp((s) => s.draft);
  const edit = useApp((s) => s.editDraft);
  const operator = useApp((s) => s.info?.operator.split('@')[0] ?? '');
  const jobs = useCall('jobs:list', {}, 'List the jobs');
  const [detail, setDetail] = useState<JobDetail | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (!draft.job) return setDetail(null);
    let cancelled = false;
    void act('jobs:get', { name: draft.job }, `Read job ${draft.job}`).then((d) => !cancelled && setDetail(d ?? null));
    return () => {
      cancelled = true;
    };
  }, [draft.job]);

  const job = detail?.job.name === draft.job ? detail.job : null;
  const preview = useMemo(() => previewPlan(draft, job), [draft, job]);
  const problemOf = (field: string) => preview.problems.find((p) => p.field === field || p.field.startsWith(`${field}.`))?.message;

  const create = async () => {
    if (!preview.plan) return;
    setBusy(true);
    const created = await act('plans:create', { plan: preview.plan }, 'Create the runbook');
    setBusy(false);
    if (created) {
      useApp.getState().resetDraft();
      useApp.getState().go({ name: 'runbook', runId: created.runId, step: null });
    }
  };

  const text = (
    field: keyof PlanDraft,
    label: string,
    props: { placeholder?: string; hint?: string; problem?: string; type?: string } = {},
  ) => (
    <Field label={label} hint={props.hint} problem={props.problem} id={`plan-${field}`}>
      <input
        id={`plan-${field}`}
        type={props.type ?? 'text'}
        value={draft[field]}
        placeholder={props.placeholder}
        aria-invalid={props.problem ? true : undefined}
        onChange={(e) => edit({ [field]: e.target.value })}
      />
    </Field>
  );

  return (
    <div className="plan-screen">
      <form
        className="card plan-form"
        aria-label="Backfill plan"
        onSubmit={(e) => {
          e.preventDefault();
          void create();
        }}
      >
        <h1>New backfill plan</h1>
        <Field label="Job" id="plan-job" problem={draft.job ? undefined : 'choose a job'}>
          <select id="plan-job" value={draft.job} onChange={(e) => edit({ job: e.target.value, writeMode: '' })}>
            <option value="">Choose a job…</option>
            {jobs.data?.jobs.map((j) => (
              <option key={j.name} value={j.name}>
                {j.name} ({j.unit}, {j.target})
              </option>
            ))}
          </select>
        </Field>
        {jobs.data && jobs.data.problems.length > 0 && (
          <details className="warn-box">
            <summary>{jobs.data.problems.length} job file(s) could not be read</summary>
            <ul>
              {jobs.data.problems.map((p) => (
                <li key={p}>{p}</li>
              ))}
            </ul>
          </details>
        )}
        {job && <p className="muted">{job.description ?? `${job.unit} partitions in ${job.timezone}, written by ${job.write_mode}.`}</p>}
        {text('requestId', 'Request id (the run id)', {
          placeholder: 'bf-2026-06-order-refund',
          problem: draft.requestId ? problemOf('request_id') : undefined,
        })}
        <Field label="Reason" id="plan-reason">
          <textarea
            id="plan-reason"
            rows={2}
            value={draft.reason}
            placeholder="refund reason mapping bug"
            onChange={(e) => edit({ reason: e.target.value })}
          />
        </Field>
        <div className="row2">
          {text('from', 'From (inclusive)', { placeholder: '2026-05-01', problem: problemOf('range.from') })}
          {text('to', 'To (exclusive)', { placeholder: '2026-07-01', problem: problemOf('range.to') })}
        </div>
        <div className="row3">
          <Field label="Write mode" id="plan-writeMode">
            <select
              id="plan-writeMode"
              value={draft.writeMode || job?.write_mode || 'overwrite-partition'}
              onChange={(e) => edit({ writeMode: e.target.value as PlanDraft['writeMode'] })}
            >
              <option value="overwrite-partition">overwrite-partition</option>
              <option value="upsert">upsert</option>
              <option value="append-dedupe">append-dedupe</option>
            </select>
          </Field>
          {text('sleepMs', 'Pause between partitions (ms)', { type: 'number', problem: problemOf('throttle.sleep_ms') })}
          {text('concurrency', 'Partitions at a time', { type: 'number', problem: problemOf('throttle.concurrency') })}
        </div>
        <div className="row2">
          {text('dutyCycle', 'Duty cycle (share of time working, 0–1)', { placeholder: '0.5', problem: problemOf('throttle.duty_cycle') })}
          {text('maxThrottleS', 'Halt when throttled longer than (s)', { placeholder: '1800', problem: problemOf('stop.max_throttle_s') })}
        </div>
        <fieldset>
          <legend>Stop conditions</legend>
          <div className="row3">
            {text('maxConsecutiveFailures', 'Max consecutive failures', {
              type: 'number',
              problem: problemOf('stop.max_consecutive_failures'),
            })}
            {/* An empty field is no limit: its placeholder says so, and the example is a hint, never a value that looks set. */}
            {text('maxRowDiffRatio', 'Max row difference vs dry run (ratio)', {
              placeholder: 'no limit',
              hint: 'e.g. 0.2',
              problem: problemOf('stop.max_row_diff_ratio'),
            })}
            {text('maxLockWaitMs', 'Max lock wait (ms)', {
              placeholder: 'no limit',
              hint: 'e.g. 5000',
              problem: problemOf('stop.max_lock_wait_ms'),
            })}
          </div>
          <p className="muted small">
            Above a max level the run throttles: it waits, then continues by itself. Above a critical level it halts at once.
          </p>
          <div className="row3">
            {text('criticalLockWaitMs', 'Critical lock wait (ms)', {
              placeholder: 'no limit',
              hint: 'e.g. 30000',
              problem: problemOf('stop.critical_lock_wait_ms'),
            })}
            {text('maxReplicationLagS', 'Max replication lag (s)', {
              placeholder: 'no limit',
              hint: 'e.g. 30',
              problem: problemOf('stop.max_replication_lag_s'),
            })}
            {text('criticalReplicationLagS', 'Critical replication lag (s)', {
              placeholder: 'no limit',
              hint: 'e.g. 300',
              problem: problemOf('stop.critical_replication_lag_s'),
            })}
          </div>
          <div className="row2">
            {text('panicFile', 'Panic file (its existence stops the run)', {
              placeholder: 'none',
              hint: 'e.g. /tmp/stop-backfill',
              problem: problemOf('stop.panic_file'),
            })}
          </div>
        </fieldset>
        <div className="row2">
          {text('requestedBy', 'Requested by', {
            placeholder: operator ? `${operator} (you)` : 'you',
            hint: 'left empty: you, the operator',
          })}
          {text('owner', 'Owner')}
        </div>
        <button type="submit" className="primary" disabled={!preview.plan || busy}>
          {busy ? 'Creating…' : 'Create the runbook'}
        </button>
        {!preview.plan && preview.problems.length > 0 && (
          <p className="muted" data-testid="still-missing">
            Still needed: {preview.problems.map((p) => `${p.field || 'plan'} (${p.message})`).join('; ')}
          </p>
        )}
      </form>
      <aside className="card plan-preview" aria-label="What this plan means" aria-live="polite">
        <h2>What this plan covers</h2>
        <p className="range-words" data-testid="range-words">
          {preview.partitions ? preview.partitions.summary : 'Give a job and a range to see the partitions.'}
        </p>
        <h3>Automation tier</h3>
        {preview.tier ? (
          <div data-testid="tier">
            <TierBadge tier={preview.tier.tier} />
            <ul className="reasons">
              {preview.tier.reasons.map((r) => (
                <li key={r}>{r}</li>
              ))}
            </ul>
          </div>
        ) : (
          <p className="muted">–</p>
        )}
        <h3>Red flags</h3>
        <FlagList flags={preview.flags} />
        {preview.tier && preview.partitions && (
          <p className="muted" data-testid="canary-preview">
            {canaryWords(canarySize({}, preview.tier.tier, preview.partitions.count))}
          </p>
        )}
      </aside>
    </div>
  );
}

function canaryWords(n: number): string {
  return n === 0
    ? 'No canary: the run covers the whole range at once (a plan file may ask for one with canary: N).'
    : `Canary: the first ${n} partition(s) run, are reconciled and compared first; the run then waits for you to continue or abandon it.`;
}

export function FlagList({ flags, dryRunOnRecord = false }: { flags: readonly RedFlag[]; dryRunOnRecord?: boolean }) {
  if (flags.length === 0) return <p className="ok-text">No red flags.</p>;
  return (
    <ul className="flags" data-testid="red-flags">
      {flags.map((f) => (
        <li key={`${f.code}-${f.field ?? ''}`} className={`flag flag-${f.severity}`}>
          <Badge tone={f.severity === 'block' ? 'danger' : 'warn'}>{f.severity === 'block' ? 'blocks' : 'warning'}</Badge>{' '}
          <code>{f.code}</code> {f.message}
          {f.code === 'no-dry-run' && !dryRunOnRecord && <span className="muted"> — step 3 (impact scope) records it.</span>}
        </li>
      ))}
    </ul>
  );
}

function Field({
  label,
  id,
  hint,
  problem,
  children,
}: {
  label: string;
  id: string;
  hint?: string;
  problem?: string;
  children: ReactNode;
}) {
  return (
    <div className={`field${problem ? ' has-problem' : ''}`}>
      <label htmlFor={id}>{label}</label>
      {children}
      {hint && <small className="muted">{hint}</small>}
      {problem && (
        <small className="problem" id={`${id}-problem`}>
          {problem}
        </small>
      )}
    </div>
  );
}
