/**
 * Step 5, execute: the executors this process drives, their live numbers, and pause / resume /
 * stop, which all act at a partition boundary (Runner.requestStop: the partition in flight
 * finishes; the run stays resumable). Starting and resuming go through openExecution
 * (execute.ts), as the CLI's do, so the app is not a side door either; the runbook's own
 * order (steps 1–4 before step 5) is the app's checklist on top of it.
 */
import type { Reprocess } from '../executor/runner.ts';
import type { ExecutorEventView, LiveStats } from '../../../shared/contractTypes.ts';
import { GateError, InputError } from '../../../shared/errors.ts';
import { followThrottle } from '../../../shared/signals.ts';
import type { ExecutorEvent, RunOutcome } from '../executor/events.ts';
import type { Runner } from '../executor/runner.ts';
import { openExecution } from './execute.ts';
import { assertJobUnchanged } from './planning.ts';
import { contextOf, engineConfig, now, type EngineScope } from './scope.ts';
import { requireStep } from './steps.ts';

/** The numbers of one executor session, updated from its events. */
interface Tally {
  stopAs: 'paused' | 'halted';
  sessionStart: number;
  sessionBaseline: { published: number; rows: number };
  running: Set<string>;
  lastCheckpointAt: string | null;
  stop: LiveStats['stop'];
  throttle: LiveStats['throttle'];
}

interface Live {
  runner: Runner;
  done: Promise<RunOutcome | undefined>;
  tally: Tally;
}

export interface Executions {
  isLive: (runId: string) => boolean;
  start(runId: string, reprocess?: Reprocess): Promise<{ started: boolean }>;
  pause(runId: string): { requested: boolean };
  stop(runId: string): { requested: boolean };
  /** At shutdown: every executor stops at its partition boundary; waits up to `ms`. */
  stopAll: (ms: number) => Promise<void>;
}

export function createExecutions(scopeOf: () => EngineScope): Executions {
  const live = new Map<string, Live>();

  const stats = (runId: string, l: Tally): LiveStats => {
    const { store } = scopeOf();
    const counts = store.partitions.countByStatus(runId);
    const run = store.runs.get(runId);
    const total = run?.partitionsTotal ?? 0;
    const pending = counts.pending + counts.running + counts.validated;
    const minutes = (Date.now() - l.sessionStart) / 60_000;
    const doneThisSession = counts.published - l.sessionBaseline.published;
    const rowsThisSession = (run?.rowsWritten ?? 0) - l.sessionBaseline.rows;
    return {
      total,
      published: counts.published,
      failed: counts.failed,
      pending,
      running: [...l.running],
      rows: run?.rowsWritten ?? 0,
      rowsPerMinute: doneThisSession > 0 && minutes > 0 ? Math.round(rowsThisSession / minutes) : null,
      etaSeconds: doneThisSession > 0 ? Math.round(((minutes * 60) / doneThisSession) * pending) : null,
      lastCheckpointAt: l.lastCheckpointAt,
      stop: l.stop,
      throttle: l.throttle,
    };
  };

  const onEvent = (runId: string, l: Tally, event: ExecutorEvent | ExecutorEventView): void => {
    l.throttle = followThrottle(l.throttle, event);
    switch (event.type) {
      case 'partition-started':
        l.running.add(event.key);
        break;
      case 'partition-published':
        l.running.delete(event.key);
        l.lastCheckpointAt = now();
        break;
      case 'partition-resolved':
        l.running.delete(event.key);
        if (event.status === 'published') l.lastCheckpointAt = now();
        break;
      case 'partition-failed':
      case 'partition-retry':
        l.running.delete(event.key);
        break;
      case 'stopping':
        l.stop = { reason: event.reason, kind: event.kind };
        break;
      case 'run-started':
      case 'signals':
      case 'throttled':
      case 'throttle-ended':
      case 'retuned':
      case 'reconciled':
      case 'run-finished':
      case 'engine-error':
      case 'detached':
        break;
    }
    scopeOf().emit({ kind: 'executor', runId, at: now(), event, stats: stats(runId, l) });
  };

  async function start(runId: string, reprocess?: Reprocess): Promise<{ started: boolean }> {
    if (live.has(runId)) throw new GateError(`run ${runId} is already executing in this app`, ['pause or stop it first']);
    const scope = scopeOf();
    const ctx = contextOf(scope, runId);
    assertJobUnchanged(ctx);
    requireStep(scope, ctx, 'execute');
    const { config, env } = engineConfig(scope);
    const tally: Tally = {
      stopAs: 'paused',
      sessionStart: Date.now(),
      sessionBaseline: { published: ctx.run.partitionsPublished, rows: ctx.run.rowsWritten },
      running: new Set(),
      lastCheckpointAt: null,
      stop: null,
      throttle: null,
    };
    const execution = await openExecution({
      store: scope.store,
      config,
      env,
      prepared: ctx.prepared,
      actor: scope.actor,
      reprocess,
      onEvent: (e) => onEvent(runId, tally, e),
    });
    if (execution.status === 'done')
      throw new InputError(`run ${runId} already succeeded: nothing left to execute`, { hint: 'go on to the row-count comparison' });
    const { runner } = execution;
    const done = runner
      .run()
      .then((outcome) => {
        if (tally.stopAs === 'halted' && outcome.status === 'paused') {
          // "Stop" ends the run here (still resumable), where "pause" means coming back soon.
          scope.store.runs.setStatus(runId, 'halted', {
            actor: scope.actor,
            haltReason: tally.stop?.reason ?? `stopped by ${scope.actor}`,
          });
        }
        return outcome;
      })
      .catch((err: unknown) => {
        onEvent(runId, tally, {
          type: 'engine-error',
          message: scope.connections.redact(err instanceof Error ? err.message : String(err)),
        });
        return undefined;
      })
      .finally(() => {
        live.delete(runId);
        onEvent(runId, tally, { type: 'detached' });
      });
    live.set(runId, { runner, done, tally });
    return { started: true };
  }

  const request = (runId: string, as: 'paused' | 'halted'): { requested: boolean } => {
    const entry = live.get(runId);
    if (!entry) throw new InputError(`run ${runId} is not executing in this app`, { hint: 'start or resume it first' });
    const actor = scopeOf().actor;
    entry.tally.stopAs = as;
    entry.runner.requestStop(
      as === 'paused' ? `paused by ${actor}: finishing the partition in flight` : `stopped by ${actor} at a partition boundary`,
      'operator',
    );
    return { requested: true };
  };

  return {
    isLive: (runId) => live.has(runId),
    start,
    pause: (runId) => request(runId, 'paused'),
    stop: (runId) => request(runId, 'halted'),
    async stopAll(ms) {
      const all = [...live.values()];
      for (const l of all) l.runner.requestStop('the app is closing: finishing the partition in flight', 'operator');
      await Promise.race([Promise.all(all.map((l) => l.done)), new Promise((r) => setTimeout(r, ms))]);
    },
  };
}
