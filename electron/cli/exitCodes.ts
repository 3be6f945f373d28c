/** DESIGN §5. Scripts rely on these numbers: never renumber. */
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
