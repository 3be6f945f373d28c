import type { SignalReading } from '../../../shared/signals.ts';

/** What the executor tells its driver (CLI progress, app `run:progress` events) as it goes. */
export type ExecutorEvent =
  | { type: 'run-started'; runId: string; total: number; toDo: number; published: number; resumed: boolean; concurrency: number }
  | { type: 'partition-resolved'; key: string; status: 'published' | 'pending'; reason: string }
  | { type: 'partition-started'; key: string; attempt: number }
  | { type: 'partition-published'; key: string; rows: number; ms: number; checksum: string }
  | { type: 'partition-retry'; key: string; attempt: number; delayMs: number; error: string }
  | { type: 'partition-failed'; key: string; error: string }
  | { type: 'stopping'; reason: string; kind: 'operator' | 'condition' }
  | { type: 'retuned'; concurrency: number; sleepMs: number }
  /** every measurement of the watched signals, each against its levels */
  | { type: 'signals'; readings: SignalReading[] }
  /** a signal went over its throttle level (or cannot be measured): no new partition starts until it settles */
  | { type: 'throttled'; since: string; over: SignalReading[]; reason: string }
  /** the episode ended: the signals stayed under their levels for the settle time (resumed), or the run stopped */
  | { type: 'throttle-ended'; since: string; throttledMs: number; reason: string; outcome: ThrottleOutcome }
  | { type: 'reconciled'; ok: number; problems: number }
  | {
      type: 'run-finished';
      runId: string;
      status: RunOutcomeStatus;
      published: number;
      failed: number;
      pending: number;
      rows: number;
      ms: number;
      reason: string | null;
    };

export type RunOutcomeStatus = 'succeeded' | 'failed' | 'paused' | 'halted' | 'canary';

export interface RunOutcome {
  runId: string;
  status: RunOutcomeStatus;
  reason: string | null;
  published: number;
  failed: number;
  pending: number;
  rows: number;
  ms: number;
  /** set when a partition failed on bad input (InputError): the CLI exits 2 */
  badInput?: string;
}

export type ThrottleOutcome = 'resumed' | 'halted' | 'stopped';
