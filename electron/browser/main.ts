/**
 * Browser mode's start-up, in plain Node: the workspace (a folder, or the Sandbox started here),
 * the engine service, and the loopback server that serves the app to any browser. `npm start`
 * runs it where Electron's binary is missing; the end-to-end tests run it too.
 *
 *   node dist/node/browser-mode.mjs [--workspace DIR | --sandbox DIR] [--db FILE] [--port N]
 *        [--renderer DIR] [--ready-json]
 *
 * Without --workspace it opens $BACKFILL_RUNBOOK_WORKSPACE, else the Sandbox in the app's data
 * folder, as the desktop app does. When ready it prints the address to open (with
 * --ready-json: one JSON line `{"origin", "enterUrl", "token"}` for a program). Stops on
 * SIGINT/SIGTERM, executors at their partition boundary. A start that fails says why in one
 * line and exits with the CLI's code for that error; it never ends in a stack trace.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { defaultDbPath } from '../cli/paths.ts';
import { appVersion } from '../engine/appVersion.ts';
import { EXIT_OF_KIND } from '../cli/exitCodes.ts';
import { classifyError } from '../engine/classifyError.ts';
import { createRunbookService } from '../engine/runbook/service.ts';
import { folderWorkspace, sandboxWorkspace, type Workspace } from '../engine/runbook/workspace.ts';
import { fileSecretBox } from './fileSecretBox.ts';
import { startBrowserServer, type BrowserServer } from './server.ts';

const here = import.meta.dirname;
/** dist/node/ when built, electron/browser/ from the sources: the project is two folders up either way. */
const root = resolve(here, '../..');

function bridgeScript(): string {
  const candidates = [join(here, 'browser-bridge.js'), join(root, 'dist/node/browser-bridge.js')];
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error(`browser mode's page script is missing (looked at ${candidates.join(', ')}): run npm run build:node`);
  return readFileSync(found, 'utf8');
}

async function start(): Promise<{ server: BrowserServer; workspace: Workspace; json: boolean }> {
  const { values } = parseArgs({
    options: {
      workspace: { type: 'string' },
      sandbox: { type: 'string' },
      db: { type: 'string' },
      port: { type: 'string' },
      renderer: { type: 'string' },
      'ready-json': { type: 'boolean', default: false },
    },
  });
  const defaultDb = values.db ? resolve(values.db) : defaultDbPath();
  const sandboxDir = values.sandbox ? resolve(values.sandbox) : join(dirname(defaultDb), 'sandbox');
  const folder = values.workspace ?? (values.sandbox ? undefined : process.env.BACKFILL_RUNBOOK_WORKSPACE);
  const rendererDir = values.renderer ? resolve(values.renderer) : join(root, '.vite/renderer/main_window');
  if (!existsSync(join(rendererDir, 'index.html')))
    throw new Error(`the app's screens are not built (${rendererDir} has no index.html): run npm run build:renderer`);
  const script = bridgeScript();
  const workspace = folder ? folderWorkspace(folder, defaultDb) : await sandboxWorkspace(sandboxDir);
  if (folder && values.db) workspace.info.dbFile = defaultDb;
  try {
    const server = await startBrowserServer({
      rendererDir,
      bridgeScript: script,
      port: values.port ? Number(values.port) : 0,
      log: (line) => process.stderr.write(`${line}\n`),
      createService: (emit) =>
        createRunbookService({
          workspace,
          openSandbox: () => sandboxWorkspace(sandboxDir),
          defaultDb,
          secrets: fileSecretBox(join(dirname(resolve(workspace.info.dbFile)), 'harness-secret.key')),
          version: appVersion(),
          browserMode: true,
          emit,
        }),
    });
    return { server, workspace, json: values['ready-json'] };
  } catch (err) {
    await workspace.stop(); // the Sandbox's servers are not left running behind a failed start
    throw err;
  }
}

function announce({ server, workspace, json }: Awaited<ReturnType<typeof start>>): void {
  if (json) {
    process.stdout.write(`${JSON.stringify({ origin: server.origin, enterUrl: server.enterUrl, token: server.token })}\n`);
    return;
  }
  const where = workspace.info.kind === 'sandbox' ? 'Sandbox workspace' : `workspace ${workspace.info.dir}`;
  process.stdout.write(
    [
      '',
      `Backfill Runbook — browser mode (${where})`,
      `Open this address in your browser (it carries this session's token; keep it to yourself):`,
      '',
      `  ${server.enterUrl}`,
      '',
      'Press Ctrl-C to stop. Running executors stop at their partition boundary.',
      '',
    ].join('\n'),
  );
}

try {
  const started = await start();
  announce(started);
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    void started.server.close().finally(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
} catch (err) {
  const failure = classifyError(err);
  process.stderr.write(
    `Backfill Runbook could not start in browser mode: ${failure.message}${failure.hint ? `\n  hint: ${failure.hint}` : ''}\n`,
  );
  process.exitCode = EXIT_OF_KIND[failure.kind];
}
