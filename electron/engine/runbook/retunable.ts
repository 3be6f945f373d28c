/**
 * Which plan fields may change on a run that exists, and which of those reach it while it runs.
 * Free of imports, so `run-backfill tune --help` can build its flags from them without loading
 * the engine.
 */

/** The one answer to "may this field change on a run that exists?" */
export function retunable(field: string): boolean {
  return field.startsWith('throttle.') || field.startsWith('stop.');
}

/**
 * The one answer to "does a change of this field reach a run while it runs?" (`tune`): the
 * executor re-reads the throttle and the stop levels from the ledger; a replica, the probes and
 * the failure limit are set up when it starts, so those change on a resume only.
 */
export function liveRetunable(field: string): boolean {
  return retunable(field) && !['stop.replica', 'stop.probes', 'stop.max_consecutive_failures'].includes(field);
}
