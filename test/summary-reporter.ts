import type { Reporter, TestModule } from 'vitest/node';

/**
 * Prints one closing line `N passed, N failed` that CI recognises (vitest's own summary is not).
 * A test file that fails to load and an unhandled error each count as a failure, so a broken
 * suite can never end with "0 failed".
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = unhandledErrors.length;
    let skipped = 0;
    for (const mod of modules) {
      let casesInModule = 0;
      for (const test of mod.children.allTests()) {
        casesInModule++;
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      if (casesInModule === 0 && mod.state() === 'failed') failed++;
      for (const error of mod.errors()) if (error && casesInModule > 0) failed++;
    }
    process.stdout.write(`\n${skipped} skipped\n${passed} passed, ${failed} failed\n`);
  }
}
