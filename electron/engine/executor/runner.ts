/**
 * The partition executor's loop: ledger, resume, retries, throttle, stop. The atomic publish
 * of one partition is the target's job (PartitionTarget.writePartition); everything around it
 * lives here so Postgres and S3 targets share one behaviour.
 *
 * **Important**: the target's markers are the truth on resume. A partition the ledger shows
 * in flight (`running`/`validated`) is published exactly when the target holds a marker of
 * this run and attempt; otherwise its transaction rolled back and it goes back to `pending`.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Partition } from '../../../shared/partitions.ts';
import { GateError, InputError } from '../../../shared/errors.ts';
import type { WriteMode } from '../../../shared/schemas.ts';
import type { Store, PartitionRecord, Run } from '../store/index.ts';
import { StoreError } from '../store/index.ts';
import { AbortedError, CommitOutcomeUnknownError, PartitionBusyError, PartitionValidationError } from './errors.ts';
import type { ExecutorEvent, RunOutcome, RunOutcomeStatus } from './events.ts';
import { backoffDelay, sleep } from './retry.ts';
import type { PartitionTarget, PartitionWriteResult } from './types.ts';
import type { Fired, StopMonitor } from '../safety/stopConditions.ts';
import { leaseHolder } from './processAlive.ts';
import { pauseAfter, Throttle } from './throttle.ts';

/** A stop condition fired before COMMIT: the partition rolls back and the run halts. */
class StopConditionError extends Error {
  override readonly name = 'StopConditionError';
}

export type Reprocess = 'missing' | 'failed' | 'all';

export interface RunnerOptions {
  store: Store;
  runId: string;
  target: PartitionTarget;
  actor: string;
  reprocess?: Reprocess;
  maxAttempts?: number;
  retryBaseMs?: number;
  maxConsecutiveFailures?: number;
  /** stop conditions and throttle signals, measured every check interval while the run goes (throttle.ts) */
  monitor?: StopMonitor;
  /** runs once the run's lease is ours, before anything else (a resume's retune is recorded here) */
  onLeased?: () => void;
  onEvent?: (event: ExecutorEvent) => void;
  /**
   * Hold the run after its canary (runbook/canary.ts): only the first `size` partitions are
   * written; once they are published and reconciled, `onHeld` compares them and the run stops
   * in `canary` until the operator continues (a resume) or abandons it.
   */
  canary?: { size: number; onHeld: () => Promise<string> };
}

interface LiveSettings {
  sleepMs: number;
  concurrency: number;
  dutyCycle?: number;
}

/** How long a run's lease lasts without renewal; BACKFILL_RUNBOOK_LEASE_MS shortens it for tests. */
const LEASE_MS = Number(process.env.BACKFILL_RUNBOOK_LEASE_MS ?? 60_000);

export class Runner {
  private readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly hardStop = new AbortController();
  private readonly softStop = new AbortController();
  private stopReason: { reason: string; kind: 'operator' | 'condition' } | null = null;
  private consecutiveFailures = 0;
  /** The first partition that failed on bad input (a corrupt object, a query that cannot run): the run stops, exit 2. */
  private badInput: string | null = null;
  private readonly emit: (event: ExecutorEvent) => void;

  constructor(private readonly options: RunnerOptions) {
    this.emit = options.onEvent ?? (() => undefined);
  }

  /** Finish the partitions in flight, then stop: the run stays resumable. */
  requestStop(reason = 'stopped by the operator', kind: 'operator' | 'condition' = 'operator'): void {
    if (!this.stopReason) {
      this.stopReason = { reason, kind };
      this.emit({ type: 'stopping', reason, kind });
    }
    this.softStop.abort();
  }

  /** Roll back the partitions in flight now and stop. */
  abortNow(reason = 'stopped by the operator'): void {
    this.requestStop(reason);
    this.hardStop.abort();
  }

  async run(): Promise<RunOutcome> {
    const { store, runId, target, actor } = this.options;
    const started = Date.now();
    const run = store.runs.get(runId);
    this.leaseRenewedAt = Date.now();
    if (!run || (!store.runs.acquireLease(runId, this.owner, LEASE_MS) && !this.takeOverDeadLease(run))) {
      // Refused: release what the caller opened for us, or its connections keep the process alive.
      await target.close();
      await this.options.monitor?.close();
      if (!run) throw new GateError(`no run "${runId}" in the local store`);
      const current = store.runs.get(runId);
      throw new GateError(
        `run "${runId}" is being executed by another process (${current?.leaseOwner ?? 'unknown'}); only one executor may drive a run`,
        [describeHolder(current)],
      );
    }
    // Fixed for the life of a run: read once, not per partition.
    this.planHash = run.planHash;
    try {
      this.options.onLeased?.();
    } catch (err) {
      this.recordQuietly(() => store.runs.releaseLease(runId, this.owner));
      await target.close();
      await this.options.monitor?.close();
      throw err;
    }
    this.writeMode = (run.writeMode ?? 'overwrite-partition') as WriteMode;
    try {
      await target.prepare();
      const resumed = run.status !== 'planned';
      await this.resolveInFlight(run);
      const queue = this.selectWork();
      this.holdAfterCanary(queue);
      const settings = this.settings();
      const event = run.status === 'canary' ? 'run.canary-continued' : resumed ? 'run.resumed' : 'run.started';
      store.runs.setStatus(runId, 'running', { actor, event });
      if (run.status === 'running') {
        // Left 'running' by a crash: no status change to record, but the resume is an event.
        store.audit.append({
          runId,
          entity: 'run',
          entityId: runId,
          event: 'run.resumed',
          actor,
          detail: { after: 'an interruption that left the run running (crash or kill)' },
        });
      }
      const counts = store.partitions.countByStatus(runId);
      this.emit({
        type: 'run-started',
        runId,
        total: run.partitionsTotal,
        toDo: queue.length,
        published: counts.published,
        resumed,
        concurrency: settings.concurrency,
      });
      this.throttle = this.startThrottle();
      await this.drive(queue);
      await this.throttle?.stop(this.stopReason?.kind === 'condition' ? 'halted' : 'stopped');
      return await this.finish(started);
    } finally {
      await this.throttle?.stop();
      // Each step on its own: a full disk must not keep connections open (and the process alive).
      this.recordQuietly(() => store.runs.releaseLease(runId, this.owner));
      await target.close();
      await this.options.monitor?.close();
    }
  }

  private canaryHeld = false;

  /** With a canary, only its partitions are queued; the rest wait for the operator's go. */
  private holdAfterCanary(queue: PartitionRecord[]): void {
    const canary = this.options.canary;
    if (!canary) return;
    const room = Math.max(0, canary.size - this.options.store.partitions.countByStatus(this.options.runId).published);
    if (queue.length > room) {
      queue.splice(room);
      this.canaryHeld = true;
    }
  }

  /**
   * The throttle's loop measures every signal each check interval; the partitions ask its gate
   * before they start. Its halts go through fire(); a critical level rolls back what is in flight.
   */
  private startThrottle(): Throttle | null {
    const monitor = this.options.monitor;
    if (!monitor) return null;
    const { store, runId, actor } = this.options;
    const throttle = new Throttle({
      monitor,
      emit: this.emit,
      record: (event, detail) =>
        this.recordQuietly(() => store.audit.append({ runId, entity: 'run', entityId: runId, event, actor, detail })),
      halt: (fired, now) => {
        // Already stopping (an operator's Ctrl-C, say): nothing new fired — and a soft stop must
        // never be turned into a rollback of the partition in flight.
        if (this.stopReason) return;
        this.fire(fired);
        if (now) this.hardStop.abort();
      },
      keepAlive: () => {
        if (this.renewQuietly()) return;
        this.requestStop('the run lease was taken over by another executor', 'condition');
        this.hardStop.abort();
      },
    });
    throttle.start();
    return throttle;
  }

  private fire(fired: Fired): void {
    this.recordQuietly(() =>
      this.options.store.audit.append({
        runId: this.options.runId,
        entity: 'run',
        entityId: this.options.runId,
        event: 'run.stop-condition',
        actor: this.options.actor,
        detail: { ...fired },
      }),
    );
    this.requestStop(fired.reason, 'condition');
  }

  /** A ledger write whose failure must not mask the reason for stopping. */
  private recordQuietly(write: () => unknown): void {
    try {
      write();
    } catch (err) {
      if (!(err instanceof StoreError)) throw err;
    }
  }

  private leaseRenewedAt = 0;
  private throttle: Throttle | null = null;
  private planHash = '';
  private writeMode: WriteMode = 'overwrite-partition';

  /**
   * Keeps the run's lease, writing to the ledger only when a third of its time has gone: a
   * takeover needs the lease to expire first, so a lease renewed that recently is still ours.
   */
  private holdLease(): boolean {
    const now = Date.now();
    if (now - this.leaseRenewedAt < LEASE_MS / 3) return true;
    const ok = this.options.store.runs.renewLease(this.options.runId, this.owner, LEASE_MS);
    if (ok) this.leaseRenewedAt = now;
    return ok;
  }

  private renewQuietly(): boolean {
    try {
      return this.holdLease();
    } catch (err) {
      if (err instanceof StoreError) return true; // a full disk is handled at the next ledger write
      throw err;
    }
  }

  /**
   * A lease held by a process of this machine that no longer runs (killed, crashed, a zombie
   * not yet reaped) is taken over at once instead of waiting for it to expire. A stopped
   * (SIGSTOP) process still exists and keeps its lease; so does any process of another host.
   */
  private takeOverDeadLease(run: Run): boolean {
    const current = this.options.store.runs.get(run.runId)?.leaseOwner;
    if (!current || !leaseHolder(current).gone) return false;
    this.options.store.runs.releaseLease(run.runId, current);
    return this.options.store.runs.acquireLease(run.runId, this.owner, LEASE_MS);
  }

  /** Partitions left in flight by a crash: the target's marker decides. */
  private async resolveInFlight(run: Run): Promise<void> {
    const { store, target, actor } = this.options;
    const inFlight = store.partitions.list(run.runId).filter((p) => p.status === 'running' || p.status === 'validated');
    if (inFlight.length === 0) return;
    const marks = await target.readMarks(inFlight.map((p) => p.key));
    for (const p of inFlight) {
      const mark = marks.get(p.key);
      if (mark && mark.runId === run.runId && mark.attempt === p.attempt) {
        store.partitions.transition(run.runId, p.key, 'published', { rowsWritten: mark.rowsWritten, checksum: mark.checksum }, actor, {
          resolvedBy: 'target marker',
        });
        this.emit({
          type: 'partition-resolved',
          key: p.key,
          status: 'published',
          reason: 'committed before the interruption: marker found on the target',
        });
      } else {
        store.partitions.transition(run.runId, p.key, 'pending', {}, actor, { resolvedBy: 'no marker: the transaction rolled back' });
        this.emit({
          type: 'partition-resolved',
          key: p.key,
          status: 'pending',
          reason: 'rolled back at the interruption: no marker on the target',
        });
      }
    }
  }

  private selectWork(): PartitionRecord[] {
    const { store, runId, actor } = this.options;
    const reprocess = this.options.reprocess ?? 'missing';
    const all = store.partitions.list(runId);
    const picked = all.filter((p) => {
      switch (reprocess) {
        case 'missing':
          return p.status === 'pending' || p.status === 'failed';
        case 'failed':
          return p.status === 'failed';
        case 'all':
          return p.status !== 'skipped';
      }
    });
    for (const p of picked) {
      if (p.status !== 'pending') store.partitions.transition(runId, p.key, 'pending', {}, actor, { reprocess });
    }
    return picked;
  }

  private settings(): LiveSettings {
    const run = this.options.store.runs.get(this.options.runId);
    const s = run?.settings ?? {};
    return { sleepMs: s.sleepMs ?? 0, concurrency: Math.max(1, s.concurrency ?? 1), dutyCycle: s.dutyCycle };
  }

  /**
   * Keeps as many partitions in flight as the run's live concurrency says, re-read from the
   * ledger each time a slot frees up, so `run-backfill tune` takes effect without a restart.
   */
  private async drive(queue: PartitionRecord[]): Promise<void> {
    const running = new Set<Promise<void>>();
    let lastConcurrency = this.settings().concurrency;
    for (;;) {
      const { concurrency, sleepMs } = this.settings();
      if (concurrency !== lastConcurrency) {
        this.emit({ type: 'retuned', concurrency, sleepMs });
        lastConcurrency = concurrency;
      }
      while (!this.stopReason && queue.length > 0 && running.size < concurrency) {
        const next = queue.shift();
        if (!next) break;
        const task: Promise<void> = this.slot(next, queue).finally(() => running.delete(task));
        running.add(task);
      }
      if (running.size === 0) return;
      await Promise.race(running);
    }
  }

  /** One partition, then the throttle's pause (the slot stays taken while it sleeps). */
  private async slot(next: PartitionRecord, queue: PartitionRecord[]): Promise<void> {
    try {
      await this.slotUnguarded(next, queue);
    } catch (err) {
      if (!(err instanceof StoreError)) throw err;
      // The ledger cannot be written (disk full…): stop before touching the target again.
      queue.unshift(next);
      this.requestStop(`the local store failed: ${message(err)}`, 'condition');
    }
  }

  private async slotUnguarded(next: PartitionRecord, queue: PartitionRecord[]): Promise<void> {
    if (!this.holdLease()) {
      queue.unshift(next);
      this.requestStop('the run lease was taken over by another executor', 'condition');
      return;
    }
    // While the run is throttled no partition starts; an operator's stop ends the wait.
    if (!this.stopReason) await this.throttle?.gate(this.softStop.signal);
    if (this.stopReason) {
      queue.unshift(next);
      return;
    }
    const began = Date.now();
    await this.runPartition(next);
    if (queue.length > 0 && !this.stopReason) {
      const { sleepMs, dutyCycle } = this.settings();
      await sleep(pauseAfter(Date.now() - began, sleepMs, dutyCycle), this.softStop.signal);
    }
  }

  private async runPartition(record: PartitionRecord): Promise<void> {
    const { store, runId, target, actor } = this.options;
    const maxAttempts = this.options.maxAttempts ?? 4;
    const partition: Partition = { key: record.key, start: record.startAt ?? '', end: record.endAt ?? '' };
    for (let tries = 1; ; tries++) {
      const started = Date.now();
      const running = store.partitions.transition(runId, partition.key, 'running', {}, actor);
      this.emit({ type: 'partition-started', key: partition.key, attempt: running.attempt });
      try {
        const result = await target.writePartition(partition, {
          runId,
          planHash: this.planHash,
          attempt: running.attempt,
          writeMode: this.writeMode,
          signal: this.hardStop.signal,
          onValidated: (r) => {
            const fired = this.options.monitor?.rowDiff(partition.key, r.rowsWritten);
            if (fired) {
              this.fire(fired);
              throw new StopConditionError(fired.reason);
            }
            if (!this.holdLease()) throw new StopConditionError('the run lease was taken over by another executor');
            store.partitions.transition(runId, partition.key, 'validated', resultPatch(r), actor);
          },
        });
        store.partitions.transition(runId, partition.key, 'published', resultPatch(result), actor);
        this.consecutiveFailures = 0;
        this.emit({
          type: 'partition-published',
          key: partition.key,
          rows: result.rowsWritten,
          ms: Date.now() - started,
          checksum: result.checksum,
        });
        return;
      } catch (err) {
        const outcome = await this.handleFailure(partition, running.attempt, err, tries < maxAttempts);
        if (outcome === 'retry') {
          const delayMs = backoffDelay(tries, this.options.retryBaseMs ?? 500);
          this.emit({ type: 'partition-retry', key: partition.key, attempt: running.attempt, delayMs, error: message(err) });
          await sleep(delayMs, this.softStop.signal);
          if (this.stopReason) return;
          continue;
        }
        return;
      }
    }
  }

  /** Decides what a failed attempt means for the partition and the run. */
  private async handleFailure(
    partition: Partition,
    attempt: number,
    err: unknown,
    canRetry: boolean,
    markerAsked = false,
  ): Promise<'retry' | 'done'> {
    const { target } = this.options;
    const text = message(err);
    if (err instanceof StoreError) {
      // The ledger cannot be written (disk full…): stop before touching the target again.
      this.requestStop(`the local store failed: ${text}`, 'condition');
      return 'done';
    }
    if (err instanceof CommitOutcomeUnknownError) {
      // The COMMIT was sent: published or not, whatever cut its answer short (even a stop-now).
      const why = target.isTransient(err.cause) ? 'the connection dropped' : 'its round trip was cut short';
      if ((await this.settleByMarker(partition, attempt, text, why)) !== 'absent') return 'done';
      // Not published: judged as the failure that cut it short.
      return this.handleFailure(partition, attempt, err.cause, canRetry, true);
    }
    if (err instanceof StopConditionError) {
      this.safeTransition(partition.key, 'pending', { error: text });
      this.requestStop(text, 'condition');
      return 'done';
    }
    if (err instanceof AbortedError || this.hardStop.signal.aborted) {
      this.safeTransition(partition.key, 'pending', { error: text });
      return 'done';
    }
    if (err instanceof InputError) {
      // The job's input is wrong (an object that cannot be read, SQL that cannot run): every
      // retry and every partition after would fail alike, so nothing more is attempted.
      this.safeTransition(partition.key, 'failed', { error: text });
      this.emit({ type: 'partition-failed', key: partition.key, error: text });
      this.badInput ??= text;
      this.requestStop(text, 'condition');
      return 'done';
    }
    if (err instanceof PartitionBusyError) {
      this.safeTransition(partition.key, 'pending', { error: text });
      this.requestStop(text, 'condition');
      return 'done';
    }
    if (target.isTransient(err) && !(err instanceof PartitionValidationError)) {
      // The ambiguous commit: the connection may have died after COMMIT reached the server.
      if (!markerAsked && (await this.settleByMarker(partition, attempt, text, 'the connection dropped')) !== 'absent') return 'done';
      if (canRetry && !this.stopReason) {
        this.safeTransition(partition.key, 'pending', { error: text });
        return 'retry';
      }
      if (target.isLockWait(err)) {
        // Waiting longer would queue behind (or in front of) production: halt, resumable.
        this.safeTransition(partition.key, 'pending', { error: text });
        this.fire({
          condition: 'lock-wait',
          measured: `${attempt} attempt(s) timed out`,
          threshold: 'lock within lock_timeout',
          reason: `lock wait: partition ${partition.key} could not lock ${target.label} within lock_timeout after ${attempt} attempt(s) (${text})`,
        });
        return 'done';
      }
    }
    this.safeTransition(partition.key, 'failed', { error: text });
    this.emit({ type: 'partition-failed', key: partition.key, error: text });
    this.consecutiveFailures += 1;
    const limit = this.options.maxConsecutiveFailures ?? 3;
    if (this.consecutiveFailures >= limit)
      this.requestStop(`${this.consecutiveFailures} consecutive partition failures (limit ${limit})`, 'condition');
    return 'done';
  }

  /**
   * Whether this attempt was published after all, by the target's marker, when the answer to
   * its COMMIT may have been lost: `published` is recorded in the ledger; `unknown` (the target
   * cannot be asked) halts the run with the partition left in flight — resume asks the marker.
   */
  private async settleByMarker(
    partition: Partition,
    attempt: number,
    text: string,
    why: string,
  ): Promise<'published' | 'absent' | 'unknown'> {
    const { store, runId, target, actor } = this.options;
    const lookup = await target.readMarks([partition.key]).then(
      (m) => ({ reachable: true as const, mark: m.get(partition.key) }),
      (lookupErr: unknown) => ({ reachable: false as const, error: message(lookupErr) }),
    );
    if (!lookup.reachable) {
      // Not knowing is not failing: leave the partition in flight; resume asks the marker.
      this.requestStop(
        `lost contact with ${target.label} (${text}; then ${lookup.error}): partition ${partition.key} is decided on resume by the target's marker`,
        'condition',
      );
      return 'unknown';
    }
    const mark = lookup.mark;
    if (!mark || mark.runId !== runId || mark.attempt !== attempt) return 'absent';
    store.partitions.transition(runId, partition.key, 'published', { rowsWritten: mark.rowsWritten, checksum: mark.checksum }, actor, {
      resolvedBy: 'target marker after a lost acknowledgement',
    });
    this.consecutiveFailures = 0;
    this.emit({ type: 'partition-resolved', key: partition.key, status: 'published', reason: `COMMIT reached the target before ${why}` });
    return 'published';
  }

  private safeTransition(key: string, to: 'pending' | 'failed', patch: { error: string }): void {
    try {
      this.options.store.partitions.transition(this.options.runId, key, to, patch, this.options.actor);
    } catch (err) {
      if (!(err instanceof StoreError)) throw err;
      this.requestStop(`the local store failed: ${message(err)}`, 'condition');
    }
  }

  private async finish(started: number): Promise<RunOutcome> {
    const { store, runId, actor } = this.options;
    const counts = store.partitions.countByStatus(runId);
    const pending = counts.pending + counts.running + counts.validated;
    let status: RunOutcomeStatus;
    let reason: string | null = this.stopReason?.reason ?? null;
    if (this.badInput !== null) {
      status = 'failed';
      reason = this.badInput;
    } else if (this.stopReason && (pending > 0 || this.stopReason.kind === 'condition')) {
      status = this.stopReason.kind === 'operator' ? 'paused' : 'halted';
    } else if (counts.failed > 0) {
      status = 'failed';
      reason = `${counts.failed} partition(s) failed`;
    } else if (this.canaryHeld && this.options.canary) {
      // The canary's partitions are verified like a finished run's before anyone looks at them.
      const problems = await this.reconcile();
      status = problems === 0 ? 'canary' : 'failed';
      reason = problems === 0 ? await this.options.canary.onHeld() : `${problems} canary partition(s) did not reconcile`;
    } else {
      const problems = await this.reconcile();
      status = problems === 0 ? 'succeeded' : 'failed';
      if (problems > 0) reason = `${problems} partition(s) did not reconcile`;
    }
    try {
      store.runs.setStatus(runId, status, { actor, haltReason: reason ?? undefined });
    } catch (err) {
      if (!(err instanceof StoreError)) throw err;
      // Still unwritable: the run stays 'running' in the ledger and resumes like a crash.
      reason = `${reason ?? status}; the run's status could not be recorded: ${message(err)}`;
    }
    const run = store.runs.get(runId);
    const outcome: RunOutcome = {
      runId,
      status,
      reason,
      published: counts.published,
      failed: counts.failed,
      pending,
      rows: run?.rowsWritten ?? 0,
      ms: Date.now() - started,
      ...(this.badInput !== null ? { badInput: this.badInput } : {}),
    };
    this.emit({ type: 'run-finished', ...outcome });
    return outcome;
  }

  /** Completion is verified, not assumed: source vs target for every published partition. */
  private async reconcile(): Promise<number> {
    const { store, runId, target } = this.options;
    const run = store.runs.get(runId);
    const rows = [];
    for (const p of store.partitions.list(runId)) {
      if (p.status !== 'published') continue;
      rows.push(await target.reconcile({ key: p.key, start: p.startAt ?? '', end: p.endAt ?? '' }));
    }
    const problems = rows.filter((r) => !r.ok).length;
    store.evidence.add({ runId, planHash: run?.planHash ?? '', kind: 'reconciliation', body: { ok: problems === 0, partitions: rows } });
    this.emit({ type: 'reconciled', ok: rows.length - problems, problems });
    return problems;
  }
}

function resultPatch(r: PartitionWriteResult) {
  return {
    rowsWritten: r.rowsWritten,
    sourceCount: r.sourceCount ?? undefined,
    sourceSums: r.sourceSums,
    targetCount: r.targetCount,
    targetSums: r.targetSums,
    checksum: r.checksum,
  };
}

/** Who holds a run's lease, and until when, in words an operator can act on. */
function describeHolder(run: Run | undefined): string {
  if (!run?.leaseOwner) return 'its lease was taken a moment ago by another executor';
  const { host, pid } = leaseHolder(run.leaseOwner);
  const until = run.leaseExpiresAt ?? 'unknown';
  return host === hostname()
    ? `held by process ${pid} on this machine (lease until ${until}); stop that process first (Ctrl-C there, or pause it in the app)`
    : `held by process ${pid} on host ${host}, lease until ${until}; if that process is gone, resume after ${until}`;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
