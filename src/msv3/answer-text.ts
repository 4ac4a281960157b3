import { isAscii } from 'node:buffer';
import type { DecodeResult } from './result.js';
import { DEFAULT_LIMITS } from './xml/parse.js';

/**
 * A wholesaler's answer as text, read so that its size cannot hold up the event loop that serves every
 * tenant (any account may register a wholesaler of its own, docs/resilience.md "Hostile answers"): an
 * answer longer than the parser takes is refused unread, and an error page is shown by its start only.
 */

/**
 * The most bytes an answer the parser can read may have: UTF-8 takes at most three bytes per UTF-16
 * unit, and the parser reads DEFAULT_LIMITS.maxLength units. The transport stops reading an answer here
 * by default (UPSTREAM_MAX_RESPONSE_BYTES, src/config.ts, whose default is this number written out).
 */
export const MAX_READABLE_ANSWER_BYTES = 3 * DEFAULT_LIMITS.maxLength;

/** The body as text: UTF-8, without a leading byte order mark. */
export function bodyText(body: Buffer): string {
  // ASCII (the usual SOAP answer) reads the same as Latin-1, which is a plain copy (~25 % faster).
  if (isAscii(body)) return body.toString('latin1');
  const text = body.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * The answer decoded; refused without being turned into text when it has more characters than the
 * parser reads (DEFAULT_LIMITS.maxLength), as the parser would refuse it: turning 15 MB into text alone
 * took 46 ms on a 2-core VM. An ASCII answer has a character per byte; a UTF-8 one at least one UTF-16
 * unit per three bytes, so one of 4 to 12 Mi bytes is still turned into text and measured.
 */
export function decodeAnswer<T>(body: Buffer, decode: (xml: string) => DecodeResult<T>): DecodeResult<T> {
  const limit = DEFAULT_LIMITS.maxLength;
  if (body.length > MAX_READABLE_ANSWER_BYTES || (body.length > limit && isAscii(body))) {
    const message = `answer of ${body.length} bytes exceeds the limit of ${limit} characters (maxLength)`;
    return { kind: 'invalid', error: { message } };
  }
  const text = bodyText(body);
  try {
    return decode(text);
  } catch (error) {
    // Decoders promise not to throw; if one does, the answer is still undecodable, not a gateway crash.
    const message = `decoder threw: ${error instanceof Error ? error.message : String(error)}`;
    return { kind: 'invalid', error: { message } };
  }
}

const ENVELOPE_START = /^\s*(?:<\?xml[^>]*\?>\s*)?(?:<!--[\s\S]*?-->\s*)*<(?:[\w.-]+:)?Envelope[\s/>]/;

/**
 * A SOAP envelope by its content type or its first 2,000 characters (after a byte order mark), read from
 * at most 6,003 bytes: UTF-8 takes at most three bytes per UTF-16 unit.
 */
export function looksLikeSoap(contentType: string | undefined, body: Buffer): boolean {
  if (contentType?.toLowerCase().includes('application/soap+xml')) return true;
  return ENVELOPE_START.test(bodyText(body.subarray(0, 6_003)).slice(0, 2_000));
}

/** At most this many characters of an error answer go into its error. */
export const SNIPPET_CHARS = 300;
/** …taken from at most this many bytes of its start, however long the answer. */
const SNIPPET_SOURCE_BYTES = 16 * 1024;

/**
 * The start of an answer that could not be read as SOAP (an error page), for its error: whitespace runs
 * as one space, at most SNIPPET_CHARS characters and `…` where it goes on, the call's secrets scrubbed.
 * Made from the answer's first SNIPPET_SOURCE_BYTES only: over a whole 15 MB page, scrubbing and
 * collapsing took 1.7 s. A secret cut off where that start ends is dropped with the rest.
 */
export function errorSnippet(body: Buffer, secrets: readonly string[]): string {
  const cut = body.length > SNIPPET_SOURCE_BYTES;
  const text = bodyText(cut ? body.subarray(0, SNIPPET_SOURCE_BYTES) : body);
  const longest = secrets.reduce((max, secret) => Math.max(max, secret.length), 0);
  // Every secret that starts before `keep` ends inside `text` before its last character, which may be
  // a U+FFFD for a character the cut split: so it is found and scrubbed whole.
  const keep = cut ? Math.max(0, text.length - longest) : text.length;
  const flat = scrub(text, secrets, keep).replace(/\s+/g, ' ').trim();
  return flat.length > SNIPPET_CHARS || cut ? `${flat.slice(0, SNIPPET_CHARS)}…` : flat;
}

/**
 * `text`'s first `keep` characters (all by default) with each secret replaced by `[redacted]`. Secrets
 * are first masked character for character, so that cutting at `keep` counts the text's own characters
 * and cannot leave part of a secret; the longest first, so one that holds another goes whole.
 */
export function scrub(text: string, secrets: readonly string[], keep = text.length): string {
  const mask = maskFor(text, secrets);
  let masked = text;
  for (const secret of [...secrets].sort((a, b) => b.length - a.length))
    if (secret.length > 0) masked = masked.replaceAll(secret, mask.repeat(secret.length));
  const kept = keep < masked.length ? masked.slice(0, keep) : masked;
  if (!kept.includes(mask)) return kept;
  const runs = new RegExp(`\\u${mask.charCodeAt(0).toString(16).padStart(4, '0')}+`, 'g');
  return kept.replace(runs, '[redacted]');
}

/**
 * A character neither `text` nor a secret holds, to stand for a secret's characters: NUL (no header
 * value, so no secret, holds one, nor does a well-formed XML text), else the first such of the private
 * use area.
 */
function maskFor(text: string, secrets: readonly string[]): string {
  const held = (c: string) => text.includes(c) || secrets.some((secret) => secret.includes(c));
  let code = 0;
  while (held(String.fromCharCode(code))) code = code === 0 ? 0xe000 : code + 1;
  return String.fromCharCode(code);
}
