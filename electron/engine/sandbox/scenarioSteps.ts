/** The commands a manual-tier training scenario prints, each one a command run-backfill parses. */

/**
 * The manual checklist as commands, each one `run-backfill` parses as written (a test runs every
 * scenario's steps through the CLI's own parser): sanity check, snapshot, dry run, sign-off by
 * the sandbox's lead, the run, the note. A note for the reader follows a command after two spaces, in parentheses.
 */
export function manualSteps(p: {
  job: string;
  from: string;
  to: string;
  runId: string;
  flags: string;
  check?: boolean;
  note?: boolean;
}): string[] {
  const range = `--from ${p.from} --to ${p.to}`;
  const flags = p.flags === '' ? '' : ` ${p.flags}`;
  return [
    ...(p.check ? [`run-backfill check ${p.job} ${range}`] : []),
    `run-backfill snapshot ${p.job} ${range} --run-id ${p.runId}   (back up the partitions about to be overwritten)`,
    `run-backfill ${p.job} ${range} --run-id ${p.runId}${flags} --dry-run`,
    `run-backfill signoff request --run-id ${p.runId} --out ${p.runId}.request.json`,
    `run-backfill sign ${p.runId}.request.json --identity sandbox-lead --out ${p.runId}.sig.json   (the lead; passphrase: see the Training screen)`,
    `run-backfill signoff import ${p.runId}.sig.json`,
    `run-backfill ${p.job} ${range} --run-id ${p.runId}${flags}   (manual tier: it holds after its canary — the first partition, compared with the snapshot)`,
    `run-backfill --resume --run-id ${p.runId}   (read the canary's comparison first)`,
    ...(p.note === false ? [] : [noteStep(p.runId)]),
  ];
}

export function noteStep(runId: string): string {
  return `run-backfill export --run-id ${runId} --format html --out ${runId}.html`;
}
