import type { FastifyRequest } from 'fastify';

/**
 * How many header lines named `lowerName` (lower case) the request carries. Node joins a repeated
 * header into one value with ", ", which can look like one valid value, so a repetition only shows in
 * the raw lines.
 */
export function headerLineCount(request: FastifyRequest, lowerName: string): number {
  const raw = request.raw.rawHeaders;
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === lowerName.length && name.toLowerCase() === lowerName) count++;
  }
  return count;
}
