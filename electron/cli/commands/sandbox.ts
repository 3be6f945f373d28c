/**
 * `run-backfill sandbox up|down|reset|status|path|scenarios|load|check|traffic`: the training workspace for the command
 * line. `up` starts a detached supervisor (`sandbox serve`) that owns the embedded servers and
 * stops them cleanly on `down`; the workspace folder holds the config, jobs and ledger.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { processAlive } from '../../engine/executor/processAlive.ts';
import { removeSandbox, sandboxInUse, startSandbox } from '../../engine/sandbox/index.ts';
import { checkTrainingScenario, listScenarios, loadTrainingScenario } from '../../engine/sandbox/training.ts';
import { loadConfig } from '../../engine/plan/load.ts';
import { openStore, type Store } from '../../engine/store/index.ts';
import { openPg, type PgClient } from '../../engine/targets/postgres/connect.ts';
import { InputError } from '../../../shared/errors.ts';
import type { Config } from '../../../shared/schemas.ts';
import { EXIT, type ExitCode } from '../exitCodes.ts';
import { defaultDbPath } from '../paths.ts';
import type { CliContext } from '../program.ts';
import type { Reporter } from '../progress.ts';

interface SupervisorState {
  pid: number;
  port: number;
  s3Endpoint?: string;
  configFile: string;
  startedAt: string;
  startMs: number;
}

export const defaultSandboxDir = (): string => join(dirname(defaultDbPath()), 'sandbox');
const stateFile = (dir: string): string => join(dir, 'supervisor.json');

export function registerSandbox(program: Command, ctx: CliContext): void {
  const sandbox = program.command('sandbox').description('a training workspace: embedded PostgreSQL and S3 with incidents to repair');
  const dirOption = ['--dir <dir>', 'the sandbox folder', defaultSandboxDir()] as const;
  sandbox
    .command('up')
    .description('start the sandbox servers (in the background) and print the workspace')
    .option(...dirOption)
    .option('--json', 'one JSON object on stdout')
    .action(async (o: { dir: string; json?: boolean }) => ctx.act((out) => up(resolve(o.dir), out), o));
  sandbox
    .command('down')
    .description('stop the sandbox servers; the data stays for the next `up`')
    .option(...dirOption)
    .action(async (o: { dir: string }) => ctx.act((out) => down(resolve(o.dir), out), {}));
  sandbox
    .command('reset')
    .description('stop, delete all sandbox data and start again from fresh training data')
    .option(...dirOption)
    .action(async (o: { dir: string }) =>
      ctx.act(async (out) => {
        await down(resolve(o.dir), out);
        removeSandbox(resolve(o.dir));
        return up(resolve(o.dir), out);
      }, {}),
    );
  sandbox
    .command('status')
    .description('is the sandbox running, and where')
    .option(...dirOption)
    .action(async (o: { dir: string }) =>
      ctx.act((out) => {
        const dir = resolve(o.dir);
        const state = running(dir);
        const other = state ? undefined : sandboxInUse(dir);
        out.record(
          'sandbox',
          {
            running: Boolean(state) || other !== undefined,
            ...state,
            ...(other !== undefined ? { ownedBy: 'another process', postgresPid: other } : {}),
          },
          state
            ? `Sandbox running (pid ${state.pid}), PostgreSQL on 127.0.0.1:${state.port}, S3 at ${state.s3Endpoint ?? '?'}, workspace ${dir}`
            : other !== undefined
              ? `Sandbox running, started by another process (the app?; its PostgreSQL has pid ${other}), workspace ${dir}`
              : 'Sandbox is not running.',
        );
        return EXIT.ok;
      }, {}),
    );
  sandbox
    .command('path')
    .description('print the sandbox folder (cd "$(run-backfill sandbox path)")')
    .option(...dirOption)
    .action(async (o: { dir: string }) => ctx.act((out) => (out.say(resolve(o.dir)), EXIT.ok), {}));
  sandbox
    .command('scenarios')
    .description('list the training scenarios')
    .action(async () =>
      ctx.act((out) => {
        const scenarios = listScenarios();
        out.record(
          'scenarios',
          { scenarios: scenarios.map(({ id, slug, title, fixed, unavailable }) => ({ id, slug, title, fixed, unavailable })) },
          scenarios
            .map((sc) => `${sc.id}. ${sc.title}${sc.unavailable ? ` (not available: ${sc.unavailable})` : ''}\n   ${sc.story}`)
            .join('\n'),
        );
        return EXIT.ok;
      }, {}),
    );
  sandbox
    .command('load <scenario>')
    .description('reset the sandbox warehouse and lake and load a scenario (its defect)')
    .option(...dirOption)
    .action(async (id: string, o: { dir: string }) =>
      ctx.act(
        (out) =>
          withSandbox(o.dir, async (config, store) => {
            const sc = await loadTrainingScenario({ config, store, id: scenarioNumber(id) });
            const lead = sc.lead.problem
              ? `The sandbox's lead cannot sign: ${sc.lead.problem}`
              : `The sandbox's lead signs off: run-backfill sign <request> --identity ${sc.lead.name} (passphrase "${sc.lead.passphrase}" — training only; a real lead's is never shown).`;
            out.say(
              [
                `[Sandbox] scenario ${sc.id} loaded: ${sc.title}`,
                sc.story,
                '',
                `Fixed means: ${sc.fixed}`,
                '',
                'Steps:',
                ...sc.steps.map((st) => `  ${st}`),
                '',
                lead,
                `Check your work: run-backfill sandbox check ${sc.id}`,
              ].join('\n'),
            );
            return EXIT.ok;
          }),
        {},
      ),
    );
  sandbox
    .command('check <scenario>')
    .description("check a scenario's definition of fixed; exit 1 and what you missed when it does not hold")
    .option(...dirOption)
    .action(async (id: string, o: { dir: string }) =>
      ctx.act(
        (out) =>
          withSandbox(o.dir, async (config, store) => {
            const { scenario: sc, ok, checks } = await checkTrainingScenario({ config, store, id: scenarioNumber(id) });
            out.record(
              'scenario-check',
              { id: sc.id, ok, checks },
              [
                `Scenario ${sc.id}: ${sc.title} — ${ok ? 'FIXED' : 'not fixed yet'}`,
                ...checks.map((c) => `  ${c.ok ? '✓' : '✗'} ${c.name}: ${c.detail}`),
              ].join('\n'),
            );
            return ok ? EXIT.ok : EXIT.failed;
          }),
        {},
      ),
    );
  sandbox
    .command('traffic')
    .description('play production: a migration takes an exclusive lock on the order mart and holds it')
    .option(...dirOption)
    .option('--hold <seconds>', 'how long to hold the lock once it has it', '10')
    .action(async (o: { dir: string; hold: string }) =>
      ctx.act(async (out) => {
        const client = await sandboxClient(resolve(o.dir));
        try {
          await client.query('BEGIN');
          const started = Date.now();
          out.say('[Sandbox] a migration asks for ACCESS EXCLUSIVE on mart.mart_order_daily…');
          await client.query('LOCK TABLE mart.mart_order_daily IN ACCESS EXCLUSIVE MODE');
          out.say(`[Sandbox] got the lock after ${Date.now() - started} ms; holding it for ${o.hold} s`);
          await new Promise((r) => setTimeout(r, Number(o.hold) * 1000));
          await client.query('ROLLBACK');
        } finally {
          await client.end();
        }
        return EXIT.ok;
      }, {}),
    );
  sandbox
    .command('serve', { hidden: true })
    .option(...dirOption)
    .action(async (o: { dir: string }) => ctx.act(() => serve(resolve(o.dir)), {}));
}

function scenarioNumber(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n))
    throw new InputError(`scenario ${JSON.stringify(text)} is not a number: see run-backfill sandbox scenarios`, {
      field: '<scenario>',
      value: text,
    });
  return n;
}

/** `action` with the running sandbox's config and its ledger, closed after. */
async function withSandbox(dirOption: string, action: (config: Config, store: Store) => Promise<ExitCode>): Promise<ExitCode> {
  const dir = resolve(dirOption);
  const config = sandboxConfigOf(dir);
  const store = openStore(join(dir, 'runbook.sqlite'));
  try {
    return await action(config, store);
  } finally {
    store.close();
  }
}

/** The config the running sandbox wrote — whether `sandbox up` or the app started it. */
function sandboxConfigOf(dir: string): Config {
  const state = running(dir);
  if (state) return loadConfig(state.configFile);
  if (sandboxInUse(dir) !== undefined && existsSync(join(dir, 'backfill.config.yaml')))
    return loadConfig(join(dir, 'backfill.config.yaml'));
  throw new InputError(`the sandbox in ${dir} is not running: start it with run-backfill sandbox up`);
}

/** A connection to the sandbox warehouse, from the config the sandbox wrote. */
async function sandboxClient(dir: string): Promise<PgClient> {
  const config = sandboxConfigOf(dir);
  const warehouse = config.connections.warehouse;
  if (warehouse?.kind !== 'postgres')
    throw new InputError('the sandbox config has no warehouse connection', { field: 'connections.warehouse' });
  return openPg({
    url: warehouse.url,
    statementTimeoutMs: 120_000,
    lockTimeoutMs: 60_000,
    connectTimeoutMs: 10_000,
    applicationName: 'backfill-runbook:sandbox',
  });
}

function running(dir: string): SupervisorState | undefined {
  try {
    const state = JSON.parse(readFileSync(stateFile(dir), 'utf8')) as SupervisorState;
    return processAlive(state.pid) ? state : undefined;
  } catch {
    return undefined;
  }
}

async function up(dir: string, out: Reporter): Promise<ExitCode> {
  const already = running(dir);
  if (already) {
    report(dir, already, out, 'already running');
    return EXIT.ok;
  }
  const other = sandboxInUse(dir);
  if (other !== undefined) {
    out.say(
      [
        `[Sandbox] already running, started by another process (the app?; its PostgreSQL has pid ${other}). Use it as it is:`,
        `    export BACKFILL_RUNBOOK_WORKSPACE="${dir}"`,
        'It stops when that process stops (quit the app).',
      ].join('\n'),
    );
    return EXIT.ok;
  }
  const started = Date.now();
  const log = join(dir, 'sandbox.log');
  mkdirSync(dir, { recursive: true });
  const fd = openSync(log, 'a');
  const bin = fileURLToPath(new URL('../../bin/run-backfill.mjs', import.meta.url));
  const child = spawn(process.execPath, [bin, 'sandbox', 'serve', '--dir', dir], { detached: true, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  let exited = false;
  child.on('exit', () => (exited = true));
  child.unref();
  for (;;) {
    const state = running(dir);
    if (state) {
      report(dir, state, out, `started in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      return EXIT.ok;
    }
    if (exited || Date.now() - started > 120_000) {
      const tail = existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(-15).join('\n') : '';
      out.say(`The sandbox did not start. Last lines of ${log}:\n${tail}`);
      return EXIT.failed;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

function report(dir: string, state: SupervisorState, out: Reporter, how: string): void {
  out.record(
    'sandbox',
    { dir, configFile: state.configFile, port: state.port, s3Endpoint: state.s3Endpoint, pid: state.pid },
    [
      `[Sandbox] ${how}: embedded PostgreSQL on 127.0.0.1:${state.port} and an S3 API (s3rver) at ${state.s3Endpoint ?? '?'} (training data, not production).`,
      `Workspace: ${dir}`,
      `Config written to ${state.configFile}:`,
      readFileSync(state.configFile, 'utf8').replace(/^/gm, '    '),
      'Try it:',
      `    export BACKFILL_RUNBOOK_WORKSPACE="${dir}"`,
      '    run-backfill refund-reason-daily --from 2026-05-01 --to 2026-07-01 --dry-run',
      `Stop it with: run-backfill sandbox down${dir === defaultSandboxDir() ? '' : ` --dir "${dir}"`}`,
    ].join('\n'),
  );
}

async function down(dir: string, out: Reporter): Promise<ExitCode> {
  const state = running(dir);
  if (!state) {
    const other = sandboxInUse(dir);
    if (other === undefined) {
      out.say('Sandbox is not running.');
      return EXIT.ok;
    }
    out.say(
      `The sandbox in ${dir} was started by another process (the app?; its PostgreSQL has pid ${other}), not by sandbox up: quit it there.`,
    );
    return EXIT.failed;
  }
  process.kill(state.pid, 'SIGTERM');
  const started = Date.now();
  while (Date.now() - started < 30_000) {
    try {
      process.kill(state.pid, 0);
    } catch {
      out.say(`Sandbox stopped in ${((Date.now() - started) / 1000).toFixed(1)} s; its data stays in ${dir}.`);
      return EXIT.ok;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  out.say(`The sandbox supervisor (pid ${state.pid}) did not stop within 30 s.`);
  return EXIT.failed;
}

/** The detached supervisor: owns the servers until SIGTERM / SIGINT. */
async function serve(dir: string): Promise<ExitCode> {
  const started = Date.now();
  const ws = await startSandbox({ dir, onLog: (line) => process.stdout.write(`${line}\n`) });
  const state: SupervisorState = {
    pid: process.pid,
    port: ws.pg.port,
    s3Endpoint: ws.s3.endpoint,
    configFile: ws.configFile,
    startedAt: new Date().toISOString(),
    startMs: Date.now() - started,
  };
  writeFileSync(stateFile(dir), `${JSON.stringify(state)}\n`);
  await new Promise<void>((resolveStop) => {
    process.once('SIGTERM', resolveStop);
    process.once('SIGINT', resolveStop);
  });
  try {
    unlinkSync(stateFile(dir));
  } catch {
    // already gone
  }
  await ws.stop();
  return EXIT.ok;
}
