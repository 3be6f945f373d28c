/**
 * Every command every training scenario prints goes through run-backfill's own parser, so a
 * scenario can never again tell a trainee to type an option that does not exist
 * (`sandbox traffic --seconds 10`) or a step nobody can type (`… sign-off …`). The parser runs
 * for real (commander, every subcommand registered as the CLI registers it); only the actions
 * are stubbed, so nothing is executed.
 */
import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../electron/cli/buildProgram.ts';
import type { CliContext } from '../../electron/cli/program.ts';
import { SCENARIOS } from '../../electron/engine/sandbox/scenarios.ts';

/** A step is a command, maybe with a note after two or more spaces in parentheses, or a note alone. */
function commandOf(step: string): string | null {
  if (!step.startsWith('run-backfill ')) return null;
  return step.replace(/\s{2,}\(.*\)$/, '');
}

/** The words a shell would pass: split on spaces, quotes kept together (the steps use none today). */
function words(command: string): string[] {
  return [...command.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3] ?? '');
}

/** Parses `argv` with the CLI's program; resolves to the number of actions it reached, or rejects with commander's error. */
async function parse(argv: string[]): Promise<number> {
  let reached = 0;
  const ctx: CliContext = {
    withStore: () => {
      reached++;
      return Promise.resolve();
    },
    act: () => {
      reached++;
      return Promise.resolve();
    },
  };
  const program = await buildProgram(ctx);
  const errors: string[] = [];
  program.configureOutput({ writeErr: (s) => errors.push(s), writeOut: () => undefined });
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) throw new Error(`${argv.join(' ')}: ${err.message} ${errors.join('')}`, { cause: err });
    throw err;
  }
  return reached;
}

const steps = SCENARIOS.flatMap((s) => s.steps.map((step, i) => ({ id: s.id, i, step })));

describe('the commands the training scenarios print', () => {
  it('are all commands or notes in parentheses, with no placeholder left to fill', () => {
    for (const { id, step } of steps) {
      expect(step, `scenario ${id}`).not.toMatch(/…|<[a-z-]+>|→/);
      if (commandOf(step) === null) expect(step, `scenario ${id}: a step that is not a command is a note`).toMatch(/^\(.*\)$|^edit /);
    }
  });

  it.each(steps.filter((s) => commandOf(s.step) !== null).map((s) => [s.id, s.i, commandOf(s.step) as string] as const))(
    'scenario %i, step %i parses: %s',
    async (_id, _i, command) => {
      expect(await parse(words(command).slice(1))).toBe(1);
    },
  );

  it('the parser refuses an option that does not exist, as a scenario step would show it', async () => {
    await expect(parse(['sandbox', 'traffic', '--seconds', '10'])).rejects.toThrow(/unknown option '--seconds'/);
  });
});
