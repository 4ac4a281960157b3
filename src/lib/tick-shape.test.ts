import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { moduleAsDataUrl } from '../../test/module-url.js';

/**
 * The module as JavaScript in a data: URL. The fresh process below loads it without a TypeScript loader:
 * tsx's own ticks and objects kept the tick maps alive now and then, and the control case, which must
 * see the maps replaced, went quiet (0 of 8 runs under load, against 8 of 8 without the loader).
 */
const MODULE_URL = moduleAsDataUrl(new URL('./tick-shape.ts', import.meta.url));

/**
 * In a fresh process: optionally pin, then four rounds of ticks, each followed by a full garbage
 * collection with no tick pending; V8's record of `process.nextTick` is then printed (%DebugPrint), and
 * the literal's properties it gave up on ("MEGAMORPHIC") are counted.
 */
function megamorphicTickProperties(pin: boolean): number {
  const script = `
    const { pinTickShape } = await import(${JSON.stringify(MODULE_URL)});
    if (${pin}) pinTickShape();
    const round = () => new Promise((resolve) => {
      let left = 50;
      for (let i = 0; i < 50; i++) process.nextTick(() => { if (--left === 0) resolve(); });
    });
    for (let i = 0; i < 4; i++) {
      await round();
      await new Promise((resolve) => setImmediate(resolve));
      globalThis.gc();
    }
    %DebugPrint(process.nextTick);`;
  const output = execFileSync(
    process.execPath,
    ['--allow-natives-syntax', '--expose-gc', '--input-type=module', '-e', script],
    { encoding: 'utf8', timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
  );
  return output.match(/DefineKeyedOwnPropertyInLiteral MEGAMORPHIC/g)?.length ?? 0;
}

describe('pinTickShape', () => {
  it('keeps process.nextTick building its ticks inline across full garbage collections', () => {
    expect(megamorphicTickProperties(true)).toBe(0);
  });

  it('is needed: without it, full collections between ticks make V8 give up on the tick literal', () => {
    // If this fails, Node no longer builds ticks as literals with computed keys, and the pin can go.
    expect(megamorphicTickProperties(false)).toBeGreaterThan(0);
  });
});
