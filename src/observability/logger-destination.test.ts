import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const LOGGER = fileURLToPath(new URL('./logger.ts', import.meta.url));

/**
 * Runs `body` in a fresh node process with the default destination, its standard output a file (which
 * takes every write whole, unlike a socket or a full pipe), and returns what reached the file and what
 * the process wrote to standard error. The process may end without any chance to flush (SIGKILL).
 */
function run(body: string): { stdout: string; stderr: string } {
  const folder = mkdtempSync(join(tmpdir(), 'logger-destination-'));
  const file = join(folder, 'stdout');
  const fd = openSync(file, 'w');
  try {
    const script = `const { createLogger } = await import(${JSON.stringify(LOGGER)});\nconst logger = createLogger({ level: 'info' });\n${body}`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', fd, 'pipe'],
      encoding: 'utf8',
      timeout: 60_000,
    });
    return { stdout: readFileSync(file, 'utf8'), stderr: child.stderr };
  } finally {
    closeSync(fd);
    rmSync(folder, { recursive: true, force: true });
  }
}

describe('the default log destination', () => {
  it('has written every line by the time the logging call returns, so a killed process loses none', () => {
    // An asynchronous destination hands lines to libuv's thread pool and buffers those logged while a
    // write is in flight: most of them would die with the process.
    const { stdout } = run(
      `for (let i = 0; i < 500; i++) logger.info({ i }, 'line');\nprocess.kill(process.pid, 'SIGKILL');`,
    );
    const lines = stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(500);
    expect(lines.map((line) => (JSON.parse(line) as { i: number }).i)).toEqual([...Array(500).keys()]);
  });

  it('writes each line on its own, in one write of the whole line', () => {
    // One write of at most 4,096 bytes goes into a pipe whole, so the lines of cluster workers sharing
    // a pipe as standard output cannot interleave. The child lists the writes to file descriptor 1.
    const { stderr } = run(
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
    );
    expect(JSON.parse(stderr)).toEqual(Array(50).fill(1));
  });
});
