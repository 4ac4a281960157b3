/**
 * Polls `check` until it returns a value other than `undefined` or `false`, every `everyMs` (25 unless
 * told); fails naming `what` after `timeoutMs` (a function: built then, e.g. with the output so far).
 * The one way tests wait for something to happen.
 */
export async function until<T>(
  what: string | (() => string),
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs: number,
  everyMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value as T;
    if (Date.now() > deadline)
      throw new Error(`${typeof what === 'string' ? what : what()}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
