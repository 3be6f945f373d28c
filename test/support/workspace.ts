/**
 * A user's working folder for CLI tests: backfill.config.yaml, jobs/*.yaml and a local
 * SQLite file, plus a way to run the built `run-backfill` in it exactly as a user would.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const CLI = resolve(import.meta.dirname, '../../bin/run-backfill.mjs');

export interface Workspace {
  dir: string;
  db: string;
  env: NodeJS.ProcessEnv;
  writeJob(name: string, yaml: string): void;
  writeConfig(yaml: string): void;
  writeFile(rel: string, text: string): string;
}

export function makeWorkspace(prefix: string, env: NodeJS.ProcessEnv = {}): Workspace {
  const dir = mkdtempSync(join(tmpdir(), `bfr-${prefix}-`));
  mkdirSync(join(dir, 'jobs'));
  const db = join(dir, 'runbook.sqlite');
  return {
    dir,
    db,
    env: { ...env, BACKFILL_RUNBOOK_DB: db },
    writeJob: (name, yaml) => writeFileSync(join(dir, 'jobs', `${name}.yaml`), yaml),
    writeConfig: (yaml) => writeFileSync(join(dir, 'backfill.config.yaml'), yaml),
    writeFile: (rel, text) => {
      const file = join(dir, rel);
      writeFileSync(file, text);
      return file;
    },
  };
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function startCli(ws: Workspace, args: string[]): { child: ChildProcess; done: Promise<CliResult> } {
  // A diagnostic report on SIGUSR2 (runCli's watchdog asks for one before it ends a hung command).
  const node = ['--report-on-signal', '--report-signal=SIGUSR2', `--report-directory=${ws.dir}`];
  const child = spawn(process.execPath, [...node, CLI, ...args], {
    cwd: ws.dir,
    env: { PATH: process.env.PATH, HOME: ws.dir, ...ws.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const done = new Promise<CliResult>((resolveDone) => {
    child.on('close', (code, signal) => resolveDone({ code, signal, stdout, stderr }));
  });
  return { child, done };
}

/**
 * Runs `run-backfill` to its end. A command still running after `timeoutMs` is a hang, not a slow
 * machine: the watchdog asks Node for a diagnostic report, ends the process, and returns it with
 * `code: null` and, in stderr, what kept it alive (its JavaScript stack and open handles), so
 * the failing test says where it hung instead of timing out with nothing to show.
 */
export async function runCli(ws: Workspace, args: string[], timeoutMs = 90_000): Promise<CliResult> {
  const { child, done } = startCli(ws, args);
  let hung = false;
  const watchdog = setTimeout(() => {
    hung = true;
    child.kill('SIGUSR2');
    setTimeout(() => child.kill('SIGKILL'), 3_000).unref();
  }, timeoutMs);
  const r = await done.finally(() => clearTimeout(watchdog));
  if (!hung) return r;
  return {
    ...r,
    code: null,
    stderr: `${r.stderr}\n[runCli] run-backfill ${args.join(' ')} did not exit within ${timeoutMs} ms\n${hangReport(ws.dir, child.pid)}`,
  };
}

/** What a Node diagnostic report says kept process `pid` alive. */
function hangReport(dir: string, pid: number | undefined): string {
  const file = readdirSync(dir).find((f) => f.startsWith('report.') && f.includes(`.${pid}.`) && f.endsWith('.json'));
  if (!file) return '(no diagnostic report was written)';
  const report = JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
    javascriptStack?: { stack?: string[] };
    libuv?: { type: string; is_active?: boolean; is_referenced?: boolean; remoteEndpoint?: unknown; details?: string }[];
  };
  const handles = (report.libuv ?? [])
    .filter((h) => h.is_active && h.is_referenced)
    .map((h) => `  ${h.type}${h.remoteEndpoint ? ` ${JSON.stringify(h.remoteEndpoint)}` : ''}${h.details ? ` ${h.details}` : ''}`);
  return [`stack: ${(report.javascriptStack?.stack ?? []).slice(0, 12).join('\n  ')}`, 'open handles:', ...handles].join('\n');
}

/** The docs/design.md §4 example job, pointed at a test database. */
export function orderMartJob(
  opts: { name?: string; table?: string; mode?: string; source?: string; target?: string; billing?: boolean; extra?: string } = {},
): string {
  const table = opts.table ?? 'mart.mart_order_daily';
  return `name: ${opts.name ?? 'order-daily-mart'}
unit: day
timezone: UTC
classification:
  billing: ${opts.billing ?? true}
  external_partner: false
  downstream: [dashboard.revenue_weekly]
source:
  connection: ${opts.source ?? 'warehouse'}
  query: |
    select cast(paid_at as date) as order_date, customer_id,
           count(*)::bigint as orders, sum(paid_amount) as paid_amount
    from orders
    where paid_at >= :partition_start and paid_at < :partition_end
    group by 1, 2
target:
  connection: ${opts.target ?? 'warehouse'}
  table: ${JSON.stringify(table)}
  partition_column: order_date
  key: [order_date, customer_id]
write_mode: ${opts.mode ?? 'overwrite-partition'}
validation:
  - name: orders and amount reconcile
    source: select count(*) as rows, sum(paid_amount) as amount from orders
            where paid_at >= :partition_start and paid_at < :partition_end
    target: select coalesce(sum(orders), 0) as rows, sum(paid_amount) as amount from ${table}
            where order_date >= :partition_start and order_date < :partition_end
    tolerance: 0
${opts.extra ?? ''}`;
}

export function pgConfig(connections: Record<string, { url: string; passwordEnv: string }>): string {
  return `connections:\n${Object.entries(connections)
    .map(
      ([name, c]) => `  ${name}:\n    kind: postgres\n    url: ${c.url}\n    password_env: ${c.passwordEnv}\n    lock_timeout_ms: 2000\n`,
    )
    .join('')}`;
}
