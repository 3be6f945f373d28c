/**
 * Follows a run's executor events and tells the notify targets: throttled longer than the
 * configured minutes (once per episode, with the signals as they are then), and how the run
 * ended — halted, failed, or succeeded with its reconciliation. The CLI and the app both get
 * it from openExecution, so neither tells people differently.
 */
import { followThrottle, throttleReason, type ThrottleState } from '../../../shared/signals.ts';
import type { ExecutorEvent } from '../executor/events.ts';
import type { Notifier } from './notifier.ts';
import { outcomeMessage, throttledMessage, type RunFacts } from './runMessages.ts';

export function followRun(n: Notifier, run: RunFacts): { onEvent: (e: ExecutorEvent) => void; done: () => void } {
  let timer: NodeJS.Timeout | undefined;
  let throttle: ThrottleState | null = null;
  let reconciliation: { ok: number; problems: number } | null = null;
  const stopTimer = (): void => {
    clearTimeout(timer);
    timer = undefined;
  };
  const onEvent = (e: ExecutorEvent): void => {
    throttle = followThrottle(throttle, e);
    if (e.type === 'throttled') {
      stopTimer();
      const since = e.since;
      timer = setTimeout(() => {
        if (throttle) void n.send(throttledMessage(run, since, n.throttledAfterMs / 60_000, throttleReason(throttle.over)));
      }, n.throttledAfterMs);
      timer.unref(); // a run that ends while throttled must not be kept alive by its reminder
    } else if (e.type === 'throttle-ended') {
      stopTimer();
    } else if (e.type === 'reconciled') {
      reconciliation = { ok: e.ok, problems: e.problems };
    } else if (e.type === 'run-finished') {
      stopTimer();
      const m = outcomeMessage(run, e, reconciliation);
      if (m) void n.send(m);
    }
  };
  return { onEvent, done: stopTimer };
}
