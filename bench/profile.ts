/**
 * BENCH_PROFILE=1: where the executor's time goes, per step. Wraps pg's Client#query and
 * sums the wall time of each statement by kind (first words of its SQL); COPY streams are
 * timed from submission to their end. Time spent outside any statement (ledger, Node) is
 * what is left of the run's write phase. Statements on several connections at once overlap,
 * so the per-step sums can add up to more than the wall time.
 */
import pg from 'pg';

interface Step {
  ms: number;
  count: number;
}

const steps = new Map<string, Step>();
let installed = false;

function kind(sql: string): string {
  const s = sql.replace(/\s+/g, ' ').trim();
  if (/^COPY \(/i.test(s)) return 'COPY out (source)';
  if (/^COPY /i.test(s)) return 'COPY in (target)';
  if (/pg_try_advisory_(?:xact_)?lock/.test(s)) return 'lock' + (/pg_export_snapshot/.test(s) ? ' + export snapshot' : '');
  if (/^BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT pg_export_snapshot/i.test(s)) return 'begin + export snapshot';
  if (/^COMMIT; SELECT pg_advisory_unlock_all/i.test(s)) return 'commit + unlock';
  if (/__checksum/.test(s)) return 'measures + checksum';
  if (/partition_marks/.test(s)) return /^INSERT/i.test(s) ? 'marker insert' : 'marker read';
  if (/HAVING count\(\*\) > 1/.test(s)) return 'duplicate keys';
  if (/^DELETE/i.test(s)) return 'delete';
  if (/^INSERT/i.test(s)) return 'insert';
  if (/^SET TRANSACTION SNAPSHOT/i.test(s)) return 'import snapshot';
  if (/set_config\('backfill_runbook/.test(s) || /set_config\(\$1/.test(s)) return 'set copy params';
  return s.slice(0, 48);
}

function record(name: string, started: number): void {
  const step = steps.get(name) ?? { ms: 0, count: 0 };
  step.ms += performance.now() - started;
  step.count += 1;
  steps.set(name, step);
}

export function installProfiler(): void {
  if (installed) return;
  installed = true;
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function profiled(this: unknown, ...args: unknown[]): unknown {
    const first = args[0];
    const text = typeof first === 'string' ? first : ((first as { text?: string } | null)?.text ?? '');
    const started = performance.now();
    const result = original.apply(this, args);
    if (result instanceof Promise) {
      return result.finally(() => record(kind(text), started));
    }
    // A submittable (COPY stream): time it until it ends or fails.
    const stream = result as { once?: (e: string, f: () => void) => void } | null;
    const name = kind(text);
    if (stream?.once) {
      let done = false;
      const end = (): void => {
        if (!done) record(name, started);
        done = true;
      };
      stream.once('end', end);
      stream.once('finish', end);
      stream.once('error', end);
    }
    return result;
  };
}

export type Profile = Map<string, Step>;

export function profiling(): boolean {
  return installed;
}

export function resetProfile(): void {
  steps.clear();
}

/** The sums so far (taken at the last partition published, so reconciliation stays out). */
export function snapshotProfile(): Profile {
  return new Map([...steps].map(([k, v]) => [k, { ...v }]));
}

export function printProfile(title: string, profile: Profile | undefined, wallMs: number, partitions: number): void {
  if (!profile) return;
  console.log(`\n  profile: ${title} (write phase ${wallMs.toFixed(0)} ms, ${partitions} partitions; ms per partition)`);
  const rows = [...profile.entries()].sort((x, y) => y[1].ms - x[1].ms);
  let inStatements = 0;
  for (const [name, s] of rows) {
    inStatements += s.ms;
    console.log(`    ${name.padEnd(50)} ${(s.ms / partitions).toFixed(2).padStart(8)}   (${s.count}×)`);
  }
  console.log(`    ${'(sum of statements; overlap counts twice)'.padEnd(50)} ${(inStatements / partitions).toFixed(2).padStart(8)}`);
  console.log(`    ${'(write phase per partition)'.padEnd(50)} ${(wallMs / partitions).toFixed(2).padStart(8)}`);
}
