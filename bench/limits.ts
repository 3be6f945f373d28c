/**
 * Input limits (shared/limits.ts, docs/limits.md), measured on the largest inputs they accept:
 *
 *   (limits) job parse   loadJob of the largest accepted job file (LIMITS.yamlTokens tokens of
 *                        the shape the parser is slowest on), as the app's main process runs it,
 *                        warm: the median and the slowest of the rounds — target < 50 ms, "a
 *                        moment"; the design example job (docs/design.md §4), measured the same way, is the baseline.
 *   (limits) verify      `run-backfill verify` of the largest accepted bundle (just under
 *                        LIMITS.bundleBytes, one signed run of many partitions), wall time and
 *                        peak RSS of the CLI — targets < 20 s and < 1 GiB; a one-partition
 *                        bundle's verify (the CLI's own start-up) is the baseline.
 *
 * BENCH_ONLY=limits runs these alone (no PostgreSQL needed).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportBundle } from '../electron/engine/evidence/exportNote.ts';
import { fingerprint, generateKeys, publicKeyPem } from '../electron/engine/evidence/keys.ts';
import { evidenceRepos } from '../electron/engine/evidence/repos.ts';
import type { UnlockedIdentity } from '../electron/engine/evidence/vault.ts';
import { loadJob } from '../electron/engine/plan/load.ts';
import { openStore } from '../electron/engine/store/index.ts';
import { LIMITS, showBytes } from '../shared/limits.ts';
import { largestAcceptedJob, shortKeysYaml, yamlTokens } from '../test/support/bigInputs.ts';
import { orderMartJob } from '../test/support/workspace.ts';

type Line = (name: string, value: string, target: string, pass: boolean, detail: string) => void;

const CLI = join(import.meta.dirname, '../bin/run-backfill.mjs');
const med = (v: number[]): number => [...v].sort((x, y) => x - y)[Math.floor(v.length / 2)] ?? Number.NaN;

export async function runLimitsBench(line: Line, rounds: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bfr-bench-limits-'));
  try {
    jobParse(line, dir, Math.max(rounds, 3) * 10);
    await bundleVerify(line, dir, Math.max(1, Math.min(rounds, 3)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function jobParse(line: Line, dir: string, n: number): void {
  const jobs = join(dir, 'jobs');
  mkdirSync(jobs);
  const largest = largestAcceptedJob('largest');
  writeFileSync(join(jobs, 'largest.yaml'), largest);
  writeFileSync(join(jobs, 'example.yaml'), orderMartJob({ name: 'example' }));
  writeFileSync(join(jobs, 'bomb.yaml'), shortKeysYaml(50 * 1024 * 1024));
  const time = (name: string): number[] => {
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const started = performance.now();
      loadJob(jobs, name);
      times.push(performance.now() - started);
    }
    return times;
  };
  const cold = performance.now();
  loadJob(jobs, 'largest');
  const first = performance.now() - cold;
  // Alternate so both see the same machine; the first pass of each warms the JIT.
  const big: number[] = [];
  const small: number[] = [];
  for (let r = 0; r < 3; r++) {
    big.push(...time('largest'));
    small.push(...time('example'));
  }
  const refused = performance.now();
  try {
    loadJob(jobs, 'bomb');
  } catch {
    // refused, as it should be: only the time matters here
  }
  const refusal = performance.now() - refused;
  line(
    '(limits) job parse, largest accepted file',
    `${med(big).toFixed(1)} ms`,
    '< 50 ms',
    med(big) < 50,
    `${yamlTokens(largest).toLocaleString('en-US')} tokens, ${showBytes(Buffer.byteLength(largest))}; slowest ${Math.max(...big).toFixed(1)} ms, first (cold) ${first.toFixed(0)} ms; ` +
      `÷ the example job ${med(small).toFixed(2)} ms = ${(med(big) / med(small)).toFixed(0)}; a 50 MB job refused in ${refusal.toFixed(1)} ms`,
  );
}

export function key(name: string, role: 'lead' | 'operator'): UnlockedIdentity {
  const { privateKey } = generateKeys();
  const pem = publicKeyPem(privateKey);
  return { identity: { name, role, publicKeyPem: pem, fingerprint: fingerprint(pem) }, privateKey };
}

/** One signed, finished run of `partitions` partitions, exported as `note.json` would be. */
export function bundleText(partitions: number, signer: UnlockedIdentity): string {
  const store = openStore(':memory:');
  try {
    evidenceRepos(store).identities.register({ ...signer.identity, actor: 'bench' });
    const H = (c: string) => c.repeat(64);
    store.plans.save({ planHash: H('a'), requestId: 'bf-bench', jobName: 'mart', plan: { request_id: 'bf-bench' } });
    const keys = Array.from({ length: partitions }, (_, i) => ({ key: `p${String(i).padStart(6, '0')}` }));
    store.runs.create({
      runId: 'bf-bench',
      jobName: 'mart',
      planHash: H('a'),
      jobHash: H('b'),
      kind: 'execute',
      tier: 'semi-auto',
      requestedBy: 'bench',
      executedBy: signer.identity.name,
      actor: signer.identity.name,
      partitions: keys,
    });
    store.runs.setStatus('bf-bench', 'running', { actor: 'bench', event: 'run.started' });
    // What each partition's two transitions leave behind, written in bulk: transition() recomputes
    // the run's counters from all its partitions each time, which is quadratic at this size.
    store.transaction(() => {
      for (const { key: k } of keys) {
        const common = { runId: 'bf-bench', entity: 'partition', entityId: k, actor: 'bench' };
        store.audit.append({ ...common, event: 'partition.running', fromStatus: 'pending', toStatus: 'running', detail: { attempt: 1 } });
        store.audit.append({
          ...common,
          event: 'partition.published',
          fromStatus: 'running',
          toStatus: 'published',
          detail: { attempt: 1, rowsWritten: 1000, checksum: `md5:${H('c').slice(0, 32)}`, durationMs: 120 },
        });
      }
      store.db
        .prepare(
          `UPDATE partitions SET status = 'published', rows_written = 1000, checksum = ?, attempt = 1, source_count = 1000, target_count = 1000,
             started_at = ?, finished_at = ?, duration_ms = 120 WHERE run_id = 'bf-bench'`,
        )
        .run(`md5:${H('c').slice(0, 32)}`, new Date().toISOString(), new Date().toISOString());
    });
    store.runs.setStatus('bf-bench', 'succeeded', { actor: 'bench' });
    return `${JSON.stringify(exportBundle(store, 'bf-bench', { format: 'json', actor: signer.identity.name, signer }), null, 2)}\n`;
  } finally {
    store.close();
  }
}

/** The largest bundle under the limit, by partitions: sized from a probe, then trimmed to fit. */
function largestBundle(signer: UnlockedIdentity): { text: string; partitions: number } {
  const probe = 500;
  const perPartition = Buffer.byteLength(bundleText(probe, signer)) / probe;
  let partitions = Math.floor((LIMITS.bundleBytes * 0.98) / perPartition);
  let text = bundleText(partitions, signer);
  while (Buffer.byteLength(text) > LIMITS.bundleBytes) {
    partitions = Math.floor(partitions * 0.97);
    text = bundleText(partitions, signer);
  }
  return { text, partitions };
}

interface Measured {
  code: number | null;
  ms: number;
  peakMiB: number;
  stdout: string;
}

const HOOK =
  'data:text/javascript,import{writeFileSync}from"node:fs";' +
  'process.on("exit",()=>{const f=process.env.BFR_PEAK_RSS_FILE;if(f)writeFileSync(f,String(process.resourceUsage().maxRSS))})';

function verifyCli(dir: string, file: string, pem: string): Promise<Measured> {
  const rss = join(dir, `rss-${performance.now()}`);
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', HOOK, CLI, 'verify', file, '--trust', pem, '--json'], {
    env: { PATH: process.env.PATH, HOME: dir, BFR_PEAK_RSS_FILE: rss, BACKFILL_RUNBOOK_DB: join(dir, 'none.sqlite') },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  return new Promise((resolve) =>
    child.on('close', (code) =>
      resolve({ code, ms: performance.now() - started, peakMiB: existsSync(rss) ? Number(readFileSync(rss, 'utf8')) / 1024 : NaN, stdout }),
    ),
  );
}

async function bundleVerify(line: Line, dir: string, rounds: number): Promise<void> {
  const signer = key('bench-operator', 'operator');
  const pem = join(dir, 'signer.pub.pem');
  writeFileSync(pem, signer.identity.publicKeyPem);
  const { text, partitions } = largestBundle(signer);
  const big = join(dir, 'largest.json');
  writeFileSync(big, text);
  const small = join(dir, 'small.json');
  writeFileSync(small, bundleText(1, signer));
  const bigRuns: Measured[] = [];
  const smallRuns: Measured[] = [];
  for (let r = 0; r < rounds; r++) {
    smallRuns.push(await verifyCli(dir, small, pem));
    bigRuns.push(await verifyCli(dir, big, pem));
  }
  const intact = [...bigRuns, ...smallRuns].every(
    (m) => m.code === 0 && (JSON.parse(m.stdout) as { verdict: string }).verdict === 'intact',
  );
  const ms = med(bigRuns.map((m) => m.ms));
  const peak = Math.max(...bigRuns.map((m) => m.peakMiB));
  line(
    '(limits) verify, largest accepted bundle',
    `${(ms / 1000).toFixed(2)} s`,
    '< 20 s',
    intact && ms < 20_000 && peak < 1024,
    `${showBytes(Buffer.byteLength(text))}, ${partitions.toLocaleString('en-US')} partitions, verdict ${intact ? 'INTACT' : 'NOT intact'}; peak RSS ${peak.toFixed(0)} MiB (target < 1024); ` +
      `÷ a one-partition bundle ${(med(smallRuns.map((m) => m.ms)) / 1000).toFixed(2)} s (${med(smallRuns.map((m) => m.peakMiB)).toFixed(0)} MiB); all rounds ${bigRuns.map((m) => (m.ms / 1000).toFixed(1)).join(' / ')} s`,
  );
}
