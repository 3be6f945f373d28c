import type { RuleCheck } from './types.ts';

/** Validation inside the partition's transaction failed: it was rolled back, nothing published. */
export class PartitionValidationError extends Error {
  override readonly name = 'PartitionValidationError';
  constructor(
    message: string,
    readonly checks: RuleCheck[] = [],
  ) {
    super(message);
  }
}

/** Another run holds the advisory lock of this (target, partition). */
export class PartitionBusyError extends Error {
  override readonly name = 'PartitionBusyError';
}

/**
 * The COMMIT was sent, but no answer says whether it took effect: the connection dropped, or a
 * stop-now's cancel arrived late and hit what was sent with it. The target's marker decides;
 * `cause` is the error that cut the answer short.
 */
export class CommitOutcomeUnknownError extends Error {
  override readonly name = 'CommitOutcomeUnknownError';
  constructor(partitionKey: string, cause: unknown) {
    super(
      `partition ${partitionKey}: the COMMIT was sent but its answer was lost (${cause instanceof Error ? cause.message : String(cause)}); the target's marker decides`,
      { cause },
    );
  }
}

/** The operator asked to stop now; the partition in flight was rolled back. */
export class AbortedError extends Error {
  override readonly name = 'AbortedError';
  constructor() {
    super('stopped by the operator; the partition in flight was rolled back');
  }
}
