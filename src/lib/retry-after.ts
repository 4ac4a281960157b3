/**
 * Retry-After (RFC 9110 §10.2.3) as delay-seconds or an HTTP date, in milliseconds from `now`; undefined
 * if unreadable. Read from webhook receivers (docs/webhooks.md) and from wholesalers that answer an HTTP
 * error with it (docs/errors.md).
 */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // HTTP dates in all three forms start with the day's name; Date.parse alone would take "-5" for a year.
  if (!/^[A-Za-z]{3}/.test(text)) return undefined;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
