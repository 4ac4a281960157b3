import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const HELPER = fileURLToPath(new URL('./builtin-prototypes.ts', import.meta.url));

/** Runs `body` in a fresh node process that may ask V8 whether an object has fast properties. */
function inFreshProcess(body: string): string {
  const script = `const { settleBuiltinPrototypes } = await import(${JSON.stringify(HELPER)});\nconst fast = (o) => %HasFastProperties(o);\n${body}`;
  return execFileSync(
    process.execPath,
    ['--allow-natives-syntax', '--import', 'tsx', '--input-type=module', '-e', script],
    { encoding: 'utf8', timeout: 60_000 },
  ).trim();
}

describe('settleBuiltinPrototypes', () => {
  it('turns a built-in prototype that a subclass made a dictionary back into fast mode', () => {
    const output = inFreshProcess(
      `class Sub extends String {}\nconsole.log(fast(String.prototype), new Sub('x').length);\nsettleBuiltinPrototypes();\nconsole.log(fast(String.prototype));`,
    );
    // The subclass alone leaves String.prototype a dictionary; settling makes it fast.
    expect(output.split('\n')).toEqual(['false 1', 'true']);
  });

  it('leaves every built-in prototype it covers fast, whatever state each was in', () => {
    const output = inFreshProcess(
      `class S extends String {}\nclass A extends Array {}\nclass P extends Promise {}\nsettleBuiltinPrototypes();\nconsole.log([Object, Function, String, Number, Array, Promise, Map, Set, RegExp, Error, Uint8Array].every((c) => fast(c.prototype)));`,
    );
    expect(output).toBe('true');
  });
});
