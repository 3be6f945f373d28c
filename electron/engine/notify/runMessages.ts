/**
 * The messages of a run's life: a dry run ready for sign-off (range, partitions, predicted
 * change, red flags, who must sign), throttled for long, halted, failed, succeeded (with the
 * reconciliation). Built from what the engine already holds; the same for the CLI and the app.
 */
import type { DryRunRow } from '../executor/types.ts';
import type { RunOutcome } from '../executor/events.ts';
import type { PreparedPlan } from '../runbook/prepare.ts';
import { message, type NotifyMessage } from './message.ts';

const n = (v: number): string => v.toLocaleString('en-US');

/** Σ of each measure the dry run predicts the run changes (rows, and every sum column), across partitions. */
export function predictedChange(rows: readonly DryRunRow[]): Record<string, number> {
  const totals: Record<string, number> = {};
  for (const r of rows) {
    for (const [k, v] of Object.entries(r.change)) {
      const x = typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : Number.NaN;
      if (Number.isFinite(x)) totals[k] = (totals[k] ?? 0) + x;
    }
  }
  return totals;
}

const signed = (v: number): string => `${v > 0 ? '+' : v < 0 ? '−' : '±'}${n(Math.abs(Math.round(v * 100) / 100))}`;

/** Who has to act before it runs, by the plan's automation tier. */
export function whoMustSign(tier: string, leads: readonly string[]): string {
  if (tier === 'manual')
    return `a lead's sign-off (four eyes: not the operator who runs it)${leads.length > 0 ? `: ${leads.join(', ')}` : ' — no lead is registered yet'}`;
  if (tier === 'semi-auto') return 'the operator approves the dry run and starts it; no lead sign-off needed';
  return 'nobody: the auto tier runs without a sign-off';
}

export function dryRunReadyMessage(p: PreparedPlan, rows: readonly DryRunRow[], leads: readonly string[], sandbox = false): NotifyMessage {
  const change = predictedChange(rows);
  const changeText =
    Object.keys(change).length > 0
      ? Object.entries(change)
          .map(([k, v]) => `${k} ${signed(v)}`)
          .join(', ')
      : 'none measured';
  // The dry run just taken cures "no dry run on record"; it is not a flag of itself.
  const redFlags = p.flags.filter((f) => f.code !== 'no-dry-run');
  const flags = redFlags.map((f) => `${f.severity === 'block' ? 'BLOCK' : 'warn'} ${f.code}: ${f.message}`);
  const sign = whoMustSign(p.tier, leads);
  return message({
    event: 'dry-run-ready',
    runId: p.plan.request_id,
    title: `Dry run ready for sign-off: ${p.plan.request_id}`,
    text: `${p.job.name} over ${p.summary}: predicted change ${changeText}. Needs ${sign}.`,
    tone: flags.some((f) => f.startsWith('BLOCK')) ? 'danger' : flags.length > 0 ? 'warn' : 'info',
    fields: [
      ['Job', `${p.job.name} (${p.plan.write_mode})`],
      ['Range', `${p.plan.range.from} to ${p.plan.range.to} (half-open)`],
      ['Partitions', `${n(rows.length)}: ${p.summary}`],
      ['Predicted change', changeText],
      ['Red flags', flags.length > 0 ? flags.join('\n') : 'none'],
      ['Who must sign', sign],
      ['Reason', p.plan.reason || '–'],
      ['Plan', p.planHash.slice(0, 12)],
    ],
    sandbox,
    data: {
      job: p.job.name,
      range: p.plan.range,
      partitions: rows.length,
      predictedChange: change,
      redFlags,
      tier: p.tier,
      whoMustSign: sign,
      leads,
      planHash: p.planHash,
    },
  });
}

export interface RunFacts {
  runId: string;
  job: string;
  summary: string;
  sandbox: boolean;
}

export function throttledMessage(r: RunFacts, since: string, minutes: number, reason: string): NotifyMessage {
  return message({
    event: 'throttled',
    runId: r.runId,
    title: `Backfill throttled for ${minutes < 1 ? `${Math.round(minutes * 60)} s` : `${Math.round(minutes)} min`}: ${r.runId}`,
    text: `${r.job} is waiting for its signals to settle: ${reason}. It continues by itself when they do; tune or stop it with run-backfill tune / Ctrl-C.`,
    tone: 'warn',
    fields: [
      ['Job', r.job],
      ['Range', r.summary],
      ['Throttled since', since],
      ['Signals', reason],
    ],
    sandbox: r.sandbox,
    data: { job: r.job, since, reason },
  });
}

export function outcomeMessage(r: RunFacts, o: RunOutcome, reconciliation: { ok: number; problems: number } | null): NotifyMessage | null {
  const counts = `${n(o.published)} published, ${n(o.failed)} failed, ${n(o.pending)} pending, ${n(o.rows)} rows in ${(o.ms / 1000).toFixed(1)} s`;
  const recon = reconciliation
    ? `${n(reconciliation.ok)} partition(s) agree with the source${reconciliation.problems > 0 ? `, ${n(reconciliation.problems)} do NOT` : ''}`
    : 'not reconciled';
  const fields: [string, string][] = [
    ['Job', r.job],
    ['Range', r.summary],
    ['Partitions', counts],
  ];
  const data = {
    job: r.job,
    status: o.status,
    published: o.published,
    failed: o.failed,
    pending: o.pending,
    rows: o.rows,
    ms: o.ms,
    reason: o.reason,
  };
  switch (o.status) {
    case 'succeeded':
      return message({
        event: 'succeeded',
        runId: r.runId,
        title: `Backfill succeeded: ${r.runId}`,
        text: `${r.job}: ${counts}. Reconciliation: ${recon}.`,
        tone: 'good',
        fields: [...fields, ['Reconciliation', recon]],
        sandbox: r.sandbox,
        data: { ...data, reconciliation },
      });
    case 'failed':
      return message({
        event: 'failed',
        runId: r.runId,
        title: `Backfill failed: ${r.runId}`,
        text: `${r.job}: ${o.reason ?? 'partitions failed'}. Fix the cause, then run-backfill --resume --run-id ${r.runId} retries the failed partitions.`,
        tone: 'danger',
        fields: [...fields, ['Why', o.reason ?? '–'], ['Reconciliation', recon]],
        sandbox: r.sandbox,
        data: { ...data, reconciliation },
      });
    case 'halted':
      return message({
        event: 'halted',
        runId: r.runId,
        title: `Backfill halted: ${r.runId}`,
        text: `${r.job} stopped: ${o.reason ?? 'a stop condition fired'}. Nothing published is lost; resume with run-backfill --resume --run-id ${r.runId} when it is safe.`,
        tone: 'danger',
        fields: [...fields, ['Why', o.reason ?? '–']],
        sandbox: r.sandbox,
        data,
      });
    case 'paused':
      return null; // an operator's own pause: they know
    case 'canary':
      return null; // held after its canary, as the plan asked: the operator who started it reads the comparison
  }
}

export function testMessage(target: string): NotifyMessage {
  return message({
    event: 'test',
    runId: null,
    title: 'Backfill Runbook: test notification',
    text: `This is a test from run-backfill notify test to target "${target}": notifications reach you here.`,
    tone: 'info',
    fields: [['Target', target]],
    data: { target },
  });
}
