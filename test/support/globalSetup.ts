// Starts two throwaway PostgreSQL servers for the integration and e2e projects: 'a' is the main
// one, 'b' a second server for cross-server COPY. Tests read them with inject('pgA') /
// inject('pgB'). The same embedded PostgreSQL as the product's sandbox, started the same way
// (electron/engine/sandbox/embeddedPostgres.ts) — so as root, from a clone the 'postgres' user
// cannot enter, its programs run from a copy it can reach.
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type PgServerInfo, type RunningPg } from '../../electron/engine/sandbox/embeddedPostgres.ts';

export type { PgServerInfo };

declare module 'vitest' {
  export interface ProvidedContext {
    pgA: PgServerInfo;
    pgB: PgServerInfo;
  }
}

function start(name: string): Promise<RunningPg> {
  return startEmbeddedPostgres({
    name: `test ${name}`,
    // **Hazard**: the integration and e2e projects each run this setup in the same process;
    // a folder named by pid alone was shared, and the second setup wiped the first's data.
    dir: join(tmpdir(), `backfill-runbook-test-${process.pid}-${randomBytes(4).toString('hex')}-${name}`),
    password: randomBytes(18).toString('base64url'),
    persistent: false,
    fast: true,
    onLog: process.env.BACKFILL_TEST_PG_LOG ? (line) => console.log(`[postgres ${name}] ${line}`) : undefined,
  });
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started = Date.now();
  const results = await Promise.allSettled([start('a'), start('b')]);
  const servers = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const teardown = async (): Promise<void> => void (await Promise.allSettled(servers.map((s) => s.stop())));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await teardown();
    const reason = failed.reason instanceof Error ? failed.reason.message : String(failed.reason);
    // One line that says what to do; vitest prints it instead of a stack from deep inside a spawn.
    throw new Error(`the test suite's PostgreSQL could not start: ${reason} (set BACKFILL_TEST_PG_LOG=1 to see its log)`);
  }
  const [a, b] = servers as [RunningPg, RunningPg];
  project.provide('pgA', a.info);
  project.provide('pgB', b.info);
  if (process.env.BACKFILL_TEST_TIMING) console.log(`[globalSetup] two PostgreSQL servers ready in ${Date.now() - started} ms`);
  return teardown;
}
