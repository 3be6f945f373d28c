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

/** The operator asked to stop now; the partition in flight was rolled back. */
export class AbortedError extends Error {
  override readonly name = 'AbortedError';
  constructor() {
    super('stopped by the operator; the partition in flight was rolled back');
  }
}
