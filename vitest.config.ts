import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Test files share their worker's module cache (`isolate: false`): the code keeps no state in modules
 * (docs/ARCHITECTURE.md, "Dependencies are plain arguments"), so importing the app once per worker
 * rather than once per file is safe, and it saves most of the suite's import time. The files that
 * replace a module with `vi.mock` need a fresh module graph and run isolated.
 */
const MOCKING_MODULES = ['src/http/auth.test.ts', 'src/http/auth-failures.test.ts'];

const COMMON = {
  testTimeout: 30_000,
  hookTimeout: 60_000,
  pool: 'forks' as const,
};

export default defineConfig({
  test: {
    // Two files at a time, also on a 2-core machine (vitest's default there is one): most files wait
    // on sockets and child processes rather than on the CPU.
    maxWorkers: 2,
    reporters: ['default', './test/summary-reporter.ts'],
    projects: [
      {
        test: {
          ...COMMON,
          name: 'shared',
          isolate: false,
          setupFiles: ['./test/shared-worker-guard.ts'],
          include: [
            'src/**/*.test.ts',
            'test/**/*.test.ts',
            'bench/**/*.test.ts',
            'battery/**/*.test.ts',
            'packages/*/src/**/*.test.ts',
            'packages/*/scripts/**/*.test.ts',
            'packages/*/test/**/*.test.ts',
          ],
          exclude: [...configDefaults.exclude, ...MOCKING_MODULES],
        },
      },
      { test: { ...COMMON, name: 'isolated', include: MOCKING_MODULES } },
    ],
  },
});
