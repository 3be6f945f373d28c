import { defineConfig } from 'vitest/config';

// Three projects: pure unit tests (no servers; component tests pick happy-dom per file),
// integration tests on a real PostgreSQL started once per run by test/support/globalSetup.ts,
// and e2e: the built renderer in real Chromium through browser mode's server (electron/browser).
// expect.poll waits for what a server or the page does next; vitest's 1 s default is shorter
// than a sanity check takes on a busy machine (two suites side by side).
const SERVER_POLL = { poll: { timeout: 15_000 } };

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.{ts,tsx}'],
          environment: 'node',
          // Unit tests assert outcomes, never time (benchmarks do): on a busy machine a first
          // import of the CLI's commands or a 10,000-run ledger has taken over vitest's 5 s / 10 s.
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/support/globalSetup.ts', 'test/support/s3GlobalSetup.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
          expect: SERVER_POLL,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/support/globalSetup.ts'],
          testTimeout: 300_000,
          hookTimeout: 300_000,
          fileParallelism: false,
          expect: SERVER_POLL,
        },
      },
    ],
  },
});
