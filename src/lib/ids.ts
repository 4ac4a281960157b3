import { randomBytes, randomUUID } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Random bytes are drawn from the CSPRNG 4 KiB at a time and handed out once each (as Node does for
 * `randomUUID`): one `randomBytes` call per request id cost more than the rest of the id.
 */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let poolOffset = 0;

function randomByte(): number {
  if (poolOffset >= pool.length) {
    pool = randomBytes(POOL_BYTES);
    poolOffset = 0;
  }
  return pool[poolOffset++]!;
}

/** Base62 text of `length` random characters (unbiased: rejection sampling per character). */
export function randomToken(length: number): string {
  let out = '';
  while (out.length < length) {
    const b = randomByte() & 0x3f; // 0..63, reject 62 and 63
    if (b < 62) out += BASE62[b];
  }
  return out;
}

/** Tokens of this length carry log2(62^22) ≈ 131 bits. */
export const TOKEN_LENGTH = 22;

export const newEventId = (): string => `evt_${randomToken(TOKEN_LENGTH)}`;
export const newWebhookId = (): string => `whk_${randomToken(TOKEN_LENGTH)}`;
export const newRequestId = (): string => `req_${randomToken(TOKEN_LENGTH)}`;
export const newUuid = (): string => randomUUID();

/** CRC-32 (IEEE), used for the checksum suffix of API keys so scanners can recognise them offline. */
const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32(text: string): number {
  let crc = 0xffffffff;
  const bytes = Buffer.from(text, 'utf8');
  for (const byte of bytes) crc = CRC_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** Fixed-width base62 of a 32-bit number (6 characters). */
export function base62Fixed(value: number, width = 6): string {
  let out = '';
  let v = value;
  for (let i = 0; i < width; i++) {
    out = BASE62[v % 62] + out;
    v = Math.floor(v / 62);
  }
  return out;
}
