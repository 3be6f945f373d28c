/**
 * (h) the command line's start-up: `run-backfill --version` and `run-backfill status` (with and
 * without a workspace config to read its ledger from), as built
 * (bin/run-backfill.mjs → dist/node), against a bare `node -e 0` measured in the same pairs.
 * Target: each at most 1.5 × node's own start-up + 100 ms — they load commander, the store and
 * the one command they run, never pg, the AWS SDK or the executor.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describePairs, measurePairs } from './pairs.ts';

type Line = (name: string, value: string, target: string, pass: boolean, detail: string) => void;

const CLI = resolve(import.meta.dirname, '../bin/run-backfill.mjs');

function timed(args: string[], env: NodeJS.ProcessEnv, cwd: string): number {
  const started = performance.now();
  const r = spawnSync(process.execPath, args, { env, cwd, stdio: 'ignore' });
  const ms = performance.now() - started;
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited with ${r.status}`);
  return ms;
}

export async function runStartupBench(line: Line): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), 'bfr-bench-startup-'));
  const env = { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, '.config') };
  try {
    // A workspace as the README has it: a config naming its ledger (read for `ledger:` alone).
    const workspace = join(home, 'workspace');
    mkdirSync(workspace);
    writeFileSync(
      join(workspace, 'backfill.config.yaml'),
      'ledger: runbook.sqlite\nconnections:\n  warehouse: { kind: postgres, url: "postgres://backfill@127.0.0.1:5432/analytics" }\n',
    );
    timed([CLI, 'status'], env, home); // the ledgers exist (and are migrated) before anything is timed
    timed([CLI, 'status', '--workspace', workspace], env, home);
    for (const [name, args] of [
      ['--version', [CLI, '--version']],
      ['status', [CLI, 'status']],
      ['status --workspace', [CLI, 'status', '--workspace', workspace]],
    ] as const) {
      // Per pair: the command's time over its budget from that pair's own `node -e 0`.
      const r = await measurePairs({
        subject: () => Promise.resolve(timed([...args], env, home)),
        baseline: () => Promise.resolve(timed(['-e', '0'], env, home)),
        minPairs: 15,
        maxPairs: 60,
        precision: 0.03,
      });
      const budget = r.baselineMs.map((b) => 1.5 * b + 100);
      const overBudget = r.subjectMs.map((s, i) => s / (budget[i] ?? Number.NaN));
      const sorted = [...overBudget].sort((x, y) => x - y);
      const usage = sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
      const ms = (v: number[]) => [...v].sort((x, y) => x - y)[Math.floor(v.length / 2)] ?? Number.NaN;
      line(
        `(h) run-backfill ${name} ÷ node -e 0`,
        r.median.toFixed(2),
        '≤ 1.5×+100',
        usage <= 1,
        `${describePairs(r, 2)}; medians ${ms(r.subjectMs).toFixed(0)} ms vs ${ms(r.baselineMs).toFixed(0)} ms; uses ${(usage * 100).toFixed(0)}% of its budget (1.5 × node + 100 ms)`,
      );
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
