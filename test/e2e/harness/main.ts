/**
 * Runs the harness as a process of its own: the e2e tests start it (and kill it mid-run to
 * prove resume after an engine restart), and `npm start` uses it as browser mode when the
 * Electron binary is missing.
 *
 *   node --import tsx test/e2e/harness/main.ts (--workspace DIR | --sandbox DIR) [--db FILE]
 *        [--port N] [--renderer DIR] [--browser]
 *
 * Prints one JSON line `{"origin", "enterUrl", "token"}` when ready (or, with --browser, the
 * address to open, in words). Stops on SIGINT/SIGTERM, executors at a partition boundary.
 */
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { defaultDbPath } from '../../../electron/cli/paths.ts';
import { createRunbookService } from '../../../electron/engine/runbook/service.ts';
import { folderWorkspace, sandboxWorkspace } from '../../../electron/engine/runbook/workspace.ts';
import { fileSecretBox } from './fileSecretBox.ts';
import { startHarness } from './server.ts';

const { values } = parseArgs({
  options: {
    workspace: { type: 'string' },
    sandbox: { type: 'string' },
    db: { type: 'string' },
    port: { type: 'string' },
    renderer: { type: 'string' },
    browser: { type: 'boolean', default: false },
  },
});

const root = resolve(import.meta.dirname, '../../..');
const defaultDb = values.db ? resolve(values.db) : defaultDbPath();
const sandboxDir = values.sandbox ? resolve(values.sandbox) : join(dirname(defaultDb), 'sandbox');
const workspace = values.workspace ? folderWorkspace(values.workspace, defaultDb) : await sandboxWorkspace(sandboxDir);
if (values.workspace && values.db) workspace.info.dbFile = defaultDb;

const harness = await startHarness({
  rendererDir: values.renderer ? resolve(values.renderer) : join(root, '.vite/renderer/main_window'),
  port: values.port ? Number(values.port) : 0,
  injectBridgeTag: values.browser,
  log: (line) => process.stderr.write(`${line}\n`),
  createService: (emit) =>
    createRunbookService({
      workspace,
      openSandbox: () => sandboxWorkspace(sandboxDir),
      defaultDb,
      secrets: fileSecretBox(join(dirname(resolve(workspace.info.dbFile)), 'harness-secret.key')),
      version: '0.1.0',
      browserMode: true,
      emit,
    }),
});

if (values.browser) {
  process.stdout.write(
    [
      '',
      `Backfill Runbook — browser mode (${workspace.info.kind === 'sandbox' ? 'Sandbox workspace' : `workspace ${workspace.info.dir}`})`,
      `Open this address in your browser (it carries this session's token; keep it to yourself):`,
      '',
      `  ${harness.enterUrl}`,
      '',
      'Press Ctrl-C to stop. Running executors stop at their partition boundary.',
      '',
    ].join('\n'),
  );
} else {
  process.stdout.write(`${JSON.stringify({ origin: harness.origin, enterUrl: harness.enterUrl, token: harness.token })}\n`);
}

let stopping = false;
const stop = (): void => {
  if (stopping) return;
  stopping = true;
  void harness.close().finally(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
