import { type DestinationStream, type Logger, type LoggerOptions, pino } from 'pino';

/**
 * Keys whose values never reach a log line, at the top level and up to four objects deep (pino's `*`
 * spans one level). Headers included: X-API-Key, Authorization, and both MSV3 headers; the MSV3 user
 * name is the customer's account number at the wholesaler and half of a credential pair, so it is
 * redacted too (the gateway account id identifies the caller in logs). Add new secret names here.
 */
export const SECRET_KEYS = [
  'password',
  'credentials',
  'authorization',
  'cookie',
  'x-api-key',
  'x-msv3-password',
  'x-msv3-username',
  'apiKey',
  'api_key',
  'secret',
  'signingSecret',
  'signing_secret',
] as const;

const MAX_DEPTH = 4;

export const REDACT_PATHS: string[] = SECRET_KEYS.flatMap((key) => {
  const segment = /^[A-Za-z_$][\w$]*$/.test(key) ? key : `["${key}"]`;
  return Array.from({ length: MAX_DEPTH + 1 }, (_, depth) => {
    const prefix = '*.'.repeat(depth);
    return segment.startsWith('[') ? `${prefix.slice(0, -1)}${segment}` : `${prefix}${segment}`;
  });
});

export interface CreateLoggerOptions {
  level: LoggerOptions['level'];
  /** Where lines go; stdout by default. Tests pass a stream to read what was logged. */
  destination?: DestinationStream;
}

/** The process's pino logger: JSON lines, secrets redacted, requests logged without headers. */
export function createLogger(options: CreateLoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      base: { service: 'msv3-gateway' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      serializers: {
        req: (request: { method?: string; url?: string; ip?: string; routeOptions?: { url?: string } }) => ({
          method: request.method,
          url: request.url,
          route: request.routeOptions?.url,
          remote_address: request.ip,
        }),
        res: (reply: { statusCode?: number }) => ({ status: reply.statusCode }),
        err: pino.stdSerializers.err,
      },
    },
    options.destination,
  );
}
