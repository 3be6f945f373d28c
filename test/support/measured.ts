/**
 * Runs the built CLI as runCli does, and also reports its peak memory (getrusage maxRSS, via a
 * hook preloaded with --import) and wall time — printed by the size-limit tests beside each refusal.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, type CliResult, type Workspace } from './workspace.ts';

/** Preloaded into the CLI: writes its peak resident set size (KiB, getrusage) to $BFR_PEAK_RSS_FILE as it exits. */
const HOOK =
  'data:text/javascript,import{writeFileSync}from"node:fs";' +
  'process.on("exit",()=>{const f=process.env.BFR_PEAK_RSS_FILE;if(f)writeFileSync(f,String(process.resourceUsage().maxRSS))})';

export interface MeasuredResult extends CliResult {
  /** Peak resident set size in MiB; null when the process died before it could tell (a crash). */
  peakMiB: number | null;
  ms: number;
}

let n = 0;
export function runCliMeasured(ws: Workspace, args: string[]): Promise<MeasuredResult> {
  const rssFile = join(ws.dir, `.peak-rss-${process.pid}-${++n}`);
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', HOOK, CLI, ...args], {
    cwd: ws.dir,
    env: { PATH: process.env.PATH, HOME: ws.dir, ...ws.env, BFR_PEAK_RSS_FILE: rssFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((done) => {
    child.on('close', (code, signal) => {
      const peakMiB = existsSync(rssFile) ? Number(readFileSync(rssFile, 'utf8')) / 1024 : null;
      done({ code, signal, stdout, stderr, peakMiB, ms: performance.now() - started });
    });
  });
}

export function printMeasured(what: string, r: MeasuredResult): void {
  console.log(
    `${what}: exit ${r.code}, ${r.ms.toFixed(0)} ms, peak RSS ${r.peakMiB === null ? 'unknown (crashed)' : `${r.peakMiB.toFixed(0)} MiB`}`,
  );
}
