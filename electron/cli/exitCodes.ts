import type { ErrorKind } from '../engine/classifyError.ts';

/** docs/design.md §5. Scripts rely on these numbers: never renumber. */
export const EXIT = {
  /** done and validated */
  ok: 0,
  /** a partition failed or did not reconcile (also: an unexpected internal error) */
  failed: 1,
  /** bad usage, config or job file; a server that cannot be reached */
  usage: 2,
  /** halted by a stop condition or an operator; the run is resumable */
  halted: 3,
  /** refused by a gate: red flag, sign-off, sanity check, another executor */
  refused: 4,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/**
 * The exit code of each kind of error (electron/engine/classifyError.ts decides the kind; the
 * app shows the same kind as a failed call's code).
 */
export const EXIT_OF_KIND: Record<ErrorKind, ExitCode> = {
  input: EXIT.usage,
  connection: EXIT.usage,
  store: EXIT.usage,
  'not-found': EXIT.usage,
  conflict: EXIT.usage,
  unavailable: EXIT.usage,
  'plain-text-secret': EXIT.usage,
  gate: EXIT.refused,
  internal: EXIT.failed,
};
