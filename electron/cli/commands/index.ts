import type { RegisterCommand } from '../program.ts';

/**
 * Every subcommand of run-backfill, in the order `--help` lists them, with the names it adds.
 * Each module is loaded only when its command runs (or for --help): `run-backfill status`
 * never loads the AWS SDK, pg or the executor. Add one line per module.
 */
export const COMMANDS: readonly { names: readonly string[]; load: () => Promise<RegisterCommand> }[] = [
  { names: ['run'], load: async () => (await import('./run.ts')).registerRun },
  { names: ['check'], load: async () => (await import('./check.ts')).registerCheck },
  { names: ['prove'], load: async () => (await import('./prove.ts')).registerProve },
  { names: ['status'], load: async () => (await import('./status.ts')).registerStatus },
  { names: ['tune'], load: async () => (await import('./tune.ts')).registerTune },
  { names: ['abandon'], load: async () => (await import('./abandon.ts')).registerAbandon },
  { names: ['notify'], load: async () => (await import('./notify.ts')).registerNotify },
  { names: ['sandbox'], load: async () => (await import('./sandbox.ts')).registerSandbox },
  {
    names: ['identity', 'signoff', 'sign', 'verify', 'export', 'archive', 'import'],
    load: async () => (await import('./evidence.ts')).registerEvidence,
  },
  { names: ['snapshot'], load: async () => (await import('./snapshot.ts')).registerSnapshot },
  { names: ['restore'], load: async () => (await import('./restore.ts')).registerRestore },
  { names: ['lake'], load: async () => (await import('./lake.ts')).registerLake },
];

/**
 * The modules a command line needs: the one its first word names; `run` (the default command)
 * when that word is a job name or there is none; all of them for help.
 */
export function commandsFor(argv: readonly string[]): readonly (typeof COMMANDS)[number][] {
  const word = argv.find((a) => !a.startsWith('-'));
  const help = argv.includes('--help') || argv.includes('-h') || word === 'help' || argv.length === 0;
  if (help && (word === undefined || word === 'help')) return COMMANDS;
  const named = COMMANDS.find((c) => word !== undefined && c.names.includes(word));
  return [named ?? COMMANDS[0]!];
}
