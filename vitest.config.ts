import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Several suites spawn the CLI and kill writers; two cores, so keep the pool small.
    maxWorkers: 2,
    testTimeout: 30_000,
  },
});
