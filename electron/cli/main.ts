/**
 * `run-backfill`: a thin shell over engine/. Parses flags, opens the local store, and maps
 * every outcome to the exit codes of docs/design.md §5. Start-up loads commander and the one command
 * module the command line names (commands/index.ts); the engine comes with the command's action.
 */
import { CommanderError } from 'commander';
import { buildProgram } from './buildProgram.ts';
import { commandsFor } from './commands/index.ts';
import { EXIT, EXIT_OF_KIND, type ExitCode } from './exitCodes.ts';
import { resolveWorkspace } from './program.ts';
import { createReporter } from './progress.ts';

/** The error as the CLI says it: the classifier's message, where it went wrong, what to do; a stack only for the unexpected. */
async function describeError(err: unknown): Promise<{ code: ExitCode; text: string }> {
  const { classifyError } = await import('../engine/classifyError.ts');
  const f = classifyError(err);
  const code = EXIT_OF_KIND[f.kind];
  if (f.kind === 'internal') return { code, text: err instanceof Error ? (err.stack ?? err.message) : String(err) };
  const hint = f.hint ? `\n  hint: ${f.hint}` : '';
  if (f.kind === 'gate') return { code, text: [f.message, ...(f.reasons ?? []).map((r) => `  - ${r}`)].join('\n') + hint };
  const where = [
    f.file && !f.message.includes(f.file) ? f.file : undefined,
    f.field && !f.message.includes(f.field) ? `field ${f.field}` : undefined,
  ]
    .filter(Boolean)
    .join(': ');
  return { code, text: `${where ? `${where}: ` : ''}${f.message}${hint}` };
}

export async function main(argv: string[]): Promise<ExitCode> {
  let code: ExitCode = EXIT.ok;
  let json = false;
  try {
    const program = await buildProgram(
      {
        withStore: async (action, g) => {
          resolveWorkspace(g);
          json = Boolean(g.json);
          const [{ openStore }, { ledgerFile }] = await Promise.all([import('../engine/store/index.ts'), import('./ledger.ts')]);
          const out = createReporter(json);
          const store = openStore(await ledgerFile(g));
          try {
            code = await action(store, out);
          } finally {
            out.close();
            store.close();
          }
        },
        act: async (action, g) => {
          json = Boolean(g.json);
          const out = createReporter(json);
          try {
            code = await action(out);
          } finally {
            out.close();
          }
        },
      },
      commandsFor(argv),
    );
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    const described = await describeError(err);
    code = described.code;
    if (json) process.stdout.write(`${JSON.stringify({ type: 'error', exitCode: code, message: described.text })}\n`);
    process.stderr.write(`run-backfill: ${described.text}\n`);
  }
  return code;
}

const code = await main(process.argv.slice(2));
process.exitCode = code;
