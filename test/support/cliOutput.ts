/** Reading a running `run-backfill` as a user watching it would: its output so far, and its --json events. */
import type { ChildProcess } from 'node:child_process';

/** Resolves when `text` first appears on the child's stdout. */
export function waitForOutput(child: ChildProcess, text: string): Promise<void> {
  return new Promise((resolve) => {
    let seen = '';
    const onData = (d: Buffer | string): void => {
      seen += d.toString();
      if (seen.includes(text)) {
        child.stdout?.off('data', onData);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
  });
}

export interface JsonEvent {
  type: string;
  reason?: string;
  outcome?: string;
  key?: string;
  status?: string;
  readings?: { signal: string; value: number | null; max?: number; critical?: number; error?: string }[];
}

/** The --json lines of an output, in order. */
export function jsonEvents(stdout: string): JsonEvent[] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as JsonEvent);
}

/** The events between the first `throttled` and the `throttle-ended` after it. */
export function throttleWindow(events: JsonEvent[]): { from: number; to: number; during: JsonEvent[] } {
  const from = events.findIndex((e) => e.type === 'throttled');
  const to = events.findIndex((e, i) => i > from && e.type === 'throttle-ended');
  return { from, to, during: from >= 0 && to > from ? events.slice(from, to) : [] };
}
