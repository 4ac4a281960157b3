import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const LOGGER = fileURLToPath(new URL('./logger.ts', import.meta.url));

/**
 * Runs `body` in a fresh node process with the default destination (standard output, a pipe here) and
 * returns what reached the pipe: the process may end without any chance to flush (SIGKILL).
 */
function outputOf(body: string, stream: 'stdout' | 'stderr' = 'stdout'): string {
  const script = `const { createLogger } = await import(${JSON.stringify(LOGGER)});\nconst logger = createLogger({ level: 'info' });\n${body}`;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  return run[stream];
}

describe('the default log destination', () => {
  it('has written every line by the time the logging call returns, so a killed process loses none', () => {
    // An asynchronous destination hands lines to libuv's thread pool and buffers those logged while a
    // write is in flight: most of them would die with the process.
    const out = outputOf(
      `for (let i = 0; i < 500; i++) logger.info({ i }, 'line');\nprocess.kill(process.pid, 'SIGKILL');`,
    );
    const lines = out.trimEnd().split('\n');
    expect(lines).toHaveLength(500);
    expect(lines.map((line) => (JSON.parse(line) as { i: number }).i)).toEqual([...Array(500).keys()]);
  });

  it('writes each line on its own, in one write of the whole line', () => {
    // A write of at most 4,096 bytes to a pipe is never split, so the lines of cluster workers sharing
    // standard output cannot interleave. The child counts the writes to file descriptor 1.
    const out = outputOf(
      [
        "const fs = (await import('node:fs')).default;",
        'const writeSync = fs.writeSync;',
        'const lineCounts = [];',
        'fs.writeSync = (fd, data, ...rest) => {',
        "  if (fd === 1) lineCounts.push(String(data).split('\\n').length - 1);",
        '  return writeSync.call(fs, fd, data, ...rest);',
        '};',
        "for (let i = 0; i < 50; i++) logger.info({ i, pad: 'x'.repeat(3000) }, 'long');",
        'console.error(JSON.stringify(lineCounts));',
      ].join('\n'),
      'stderr',
    );
    expect(JSON.parse(out)).toEqual(Array(50).fill(1));
  });
});
