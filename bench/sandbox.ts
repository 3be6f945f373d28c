/**
 * (f) the sandbox's cold start: from an empty folder to a seeded warehouse and a reachable lake
 * (initdb, PostgreSQL and s3rver started, training data generated) — target under 10 s — with,
 * as the baseline measured in the same run, a bare embedded PostgreSQL's initdb and start.
 * (g) its stop: both servers gone, no process left behind.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { removeSandbox, startSandbox } from '../electron/engine/sandbox/index.ts';
import { sandboxServerProcesses } from '../test/support/sandboxProcesses.ts';
import { startEmbeddedPostgres } from '../electron/engine/sandbox/embeddedPostgres.ts';

type Line = (name: string, value: string, target: string, pass: boolean, detail: string) => void;

export async function runSandboxBench(line: Line, rounds: number): Promise<void> {
  const cold: number[] = [];
  const stops: number[] = [];
  const bare: number[] = [];
  let left = 0;
  for (let r = 0; r < rounds; r++) {
    const dir = join(mkdtempSync(join(tmpdir(), 'bfr-bench-sandbox-')), 'sandbox');
    let started = performance.now();
    const sandbox = await startSandbox({ dir });
    cold.push(performance.now() - started);
    started = performance.now();
    await sandbox.stop();
    stops.push(performance.now() - started);
    left += sandboxServerProcesses(dir).length;
    removeSandbox(dir);

    // Not mkdtemp: as root, PostgreSQL runs as 'postgres' and cannot enter a 0700 root folder.
    const bareDir = join(tmpdir(), `bfr-bench-bare-${process.pid}-${r}`);
    started = performance.now();
    const pg = await startEmbeddedPostgres({ name: 'bench-bare', dir: bareDir, password: 'bench', persistent: false });
    bare.push(performance.now() - started);
    await pg.stop();
    rmSync(bareDir, { recursive: true, force: true });
  }
  const med = (v: number[]): number => [...v].sort((x, y) => x - y)[Math.floor(v.length / 2)] ?? Number.NaN;
  line(
    '(f) sandbox cold start',
    `${(med(cold) / 1000).toFixed(2)} s`,
    '< 10 s',
    med(cold) < 10_000,
    `÷ bare PostgreSQL initdb+start ${(med(bare) / 1000).toFixed(2)} s = ${(med(cold) / med(bare)).toFixed(2)} (seed + s3rver cost on top)`,
  );
  line(
    '(g) sandbox stop, processes left',
    `${(med(stops) / 1000).toFixed(2)} s`,
    '0 left',
    left === 0,
    `${left} server process(es) left over ${rounds} round(s)`,
  );
}
