import type { PartitionStatus } from './types.ts';

/**
 * Where a partition may go next. Publishing straight from running is allowed because the
 * executor validates inside the same target transaction it publishes with (docs/design.md §6);
 * published → pending is the one explicit way to reprocess a published partition.
 */
export const PARTITION_TRANSITIONS: Readonly<Record<PartitionStatus, readonly PartitionStatus[]>> = {
  pending: ['running', 'skipped'],
  running: ['validated', 'failed', 'pending', 'published'],
  validated: ['published', 'failed', 'pending'],
  failed: ['running', 'pending'],
  published: ['pending'],
  skipped: ['pending'],
};

export function canTransition(from: PartitionStatus, to: PartitionStatus): boolean {
  return PARTITION_TRANSITIONS[from].includes(to);
}
