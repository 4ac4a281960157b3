import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'src/**/*.test.ts',
      'test/**/*.test.ts',
      'bench/**/*.test.ts',
      'battery/**/*.test.ts',
      'packages/*/src/**/*.test.ts',
      'packages/*/scripts/**/*.test.ts',
      'packages/*/test/**/*.test.ts',
    ],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
