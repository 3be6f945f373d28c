import { defineConfig } from 'vitest/config';

// Two projects: pure unit tests (no servers) and integration tests on a real PostgreSQL
// started once per run by test/support/globalSetup.ts.
export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], environment: 'node' } },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/support/globalSetup.ts', 'test/support/s3GlobalSetup.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
