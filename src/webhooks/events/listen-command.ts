import { setTimeout as delay } from 'node:timers/promises';
import { EVENT_TYPES, type EventType, isEventType } from '../../core/event-types.js';
import { VERSION } from '../../core/version.js';
import { type OptionValues, textOption, UsageProblem } from '../../lib/cli-options.js';
import { generateSigningSecret, maskSigningSecret } from '../subscriptions/secrets.js';
import { followEvents, type ListenDeps, type ListenOptions } from './listen.js';

/**
 * `msv3-gateway listen`: the command line of the local forwarder (`events/listen.ts`): reads and checks the
 * options, takes the signing secret given (--secret or MSV3_WEBHOOK_SECRET, the variable a receiver reads
 * its secret from, so one setting serves both and survives restarts of either) or generates and prints
 * one, and follows the feed until SIGINT or SIGTERM.
 */

const DEFAULT_GATEWAY_URL = 'http://127.0.0.1:8080';

export const LISTEN_USAGE =
  'listen (--forward-to URL | --print) [--events TYPE,…] [--wholesaler ID] [--since EVT_ID] [--once] ' +
  '[--interval MS] [--url GATEWAY_URL] [--key API_KEY] [--secret WHSEC]';

export const LISTEN_SUMMARY =
  'Forward new events of the events feed (GET /v1/events) to a local receiver, signed like webhook ' +
  'deliveries; one line per forward. --url (or MSV3_GATEWAY_URL; default ' +
  `${DEFAULT_GATEWAY_URL}) is the gateway, --key (or MSV3_API_KEY, which keeps it out of ps) its API key; ` +
  '--secret (or MSV3_WEBHOOK_SECRET) the whsec_ secret to sign with, else a new one printed at start; ' +
  `--events takes ${EVENT_TYPES.join(', ')}; --since replays the events after one; --once stops after ` +
  'those instead of following the feed (and gives up when the gateway does not answer); --print writes ' +
  'each event as a JSON line instead of forwarding it; --interval polls every MS milliseconds (default ' +
  '1000). Stop with Ctrl-C.';

export const LISTEN_OPTIONS = {
  'forward-to': { type: 'string' },
  print: { type: 'boolean' },
  once: { type: 'boolean' },
  events: { type: 'string' },
  wholesaler: { type: 'string' },
  since: { type: 'string' },
  interval: { type: 'string' },
  url: { type: 'string' },
  key: { type: 'string' },
  secret: { type: 'string' },
} as const;

const EVENT_ID = /^evt_[A-Za-z0-9]{1,64}$/;

interface ListenCommandIo {
  env: NodeJS.ProcessEnv;
  stdout(line: string): void;
  stderr(line: string): void;
}

function httpUrl(value: string, option: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageProblem(`${option} must be an http:// or https:// URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageProblem(`${option} must be an http:// or https:// URL`);
  }
  return url.href;
}

function optionsFrom(values: OptionValues, env: NodeJS.ProcessEnv): Omit<ListenOptions, 'secret'> {
  const forwardTo = textOption(values, 'forward-to');
  const print = values.print === true;
  if ((forwardTo === undefined) === !print) {
    throw new UsageProblem('give either --forward-to URL (a receiver) or --print (events on stdout)');
  }
  const apiKey = textOption(values, 'key') ?? env.MSV3_API_KEY;
  if (apiKey === undefined || apiKey.trim() === '') {
    throw new UsageProblem('an API key is required: --key or MSV3_API_KEY');
  }
  const gatewayUrl = httpUrl(
    textOption(values, 'url') ?? (env.MSV3_GATEWAY_URL || DEFAULT_GATEWAY_URL),
    textOption(values, 'url') === undefined ? 'MSV3_GATEWAY_URL' : '--url',
  );
  const options: Omit<ListenOptions, 'secret'> = {
    gatewayUrl,
    apiKey: apiKey.trim(),
    ...(forwardTo === undefined ? {} : { forwardTo: httpUrl(forwardTo, '--forward-to') }),
    ...(values.once === true ? { once: true } : {}),
    intervalMs: 1000,
    userAgent: `msv3-gateway-webhooks/${VERSION}`,
  };
  const events = textOption(values, 'events');
  if (events !== undefined) {
    const types = events
      .split(',')
      .map((type) => type.trim())
      .filter((type) => type !== '');
    const unknown = types.filter((type) => !isEventType(type));
    if (types.length === 0 || unknown.length > 0) {
      throw new UsageProblem(
        `--events: ${unknown.length > 0 ? `unknown event type ${unknown.join(', ')}` : 'no event type'}; the types are ${EVENT_TYPES.join(', ')}`,
      );
    }
    options.events = [...new Set(types)] as EventType[];
  }
  const wholesaler = textOption(values, 'wholesaler');
  if (wholesaler !== undefined) {
    if (wholesaler.trim() === '') throw new UsageProblem('--wholesaler must not be empty');
    options.wholesaler = wholesaler.trim();
  }
  const since = textOption(values, 'since');
  if (since !== undefined) {
    if (!EVENT_ID.test(since)) throw new UsageProblem('--since must be an event id, evt_…');
    options.since = since;
  }
  const interval = textOption(values, 'interval');
  if (interval !== undefined) {
    if (!/^\d{1,7}$/.test(interval) || Number(interval) < 100) {
      throw new UsageProblem('--interval must be a number of milliseconds, at least 100');
    }
    options.intervalMs = Number(interval);
  }
  return options;
}

/** `whsec_` and the base64 of at least 16 bytes: a subscription's signing_secret, or one listen printed. */
const SIGNING_SECRET = /^whsec_[A-Za-z0-9+/]{22,}={0,2}$/;

/** The secret to sign with, and where it came from; undefined: none given, make one. */
function givenSecret(
  values: OptionValues,
  env: NodeJS.ProcessEnv,
): { secret: string; from: string } | undefined {
  const option = textOption(values, 'secret');
  const from = option === undefined ? 'MSV3_WEBHOOK_SECRET' : '--secret';
  const secret = (option ?? env.MSV3_WEBHOOK_SECRET)?.trim();
  if (secret === undefined || secret === '') return undefined;
  if (!SIGNING_SECRET.test(secret)) {
    throw new UsageProblem(
      `${from} must be a signing secret: whsec_ and base64, as a subscription's signing_secret or one listen printed`,
    );
  }
  return { secret, from };
}

/** An AbortSignal that aborts on the first SIGINT or SIGTERM; `release` removes the listeners. */
function signalOnStop(): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  return {
    signal: controller.signal,
    release() {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    },
  };
}

/** Waits `ms` or until `signal` aborts, whichever comes first. */
function abortablePause(ms: number, signal: AbortSignal): Promise<void> {
  return delay(ms, undefined, { signal }).catch(() => {});
}

export async function runListenCommand(
  values: OptionValues,
  io: ListenCommandIo,
  deps: Partial<Pick<ListenDeps, 'fetch' | 'now' | 'pause'>> & { stop?: AbortSignal } = {},
): Promise<number> {
  let options: Omit<ListenOptions, 'secret'>;
  let given: { secret: string; from: string } | undefined;
  try {
    options = optionsFrom(values, io.env);
    given = givenSecret(values, io.env);
  } catch (error) {
    if (!(error instanceof UsageProblem)) throw error;
    io.stderr(`msv3-gateway listen: ${error.message}`);
    io.stderr(`Usage: msv3-gateway ${LISTEN_USAGE}`);
    return 2;
  }
  const secret = given?.secret ?? generateSigningSecret();
  const filters = [
    options.events === undefined ? 'every event type' : options.events.join(', '),
    ...(options.wholesaler === undefined ? [] : [`wholesaler ${options.wholesaler}`]),
  ];
  const feed = `${options.gatewayUrl.replace(/\/$/, '')}/v1/events (${filters.join('; ')})`;
  if (options.forwardTo === undefined) {
    // Standard output carries only the events, one JSON document per line, for jq and scripts.
    io.stderr(`Printing events of ${feed}`);
  } else {
    io.stdout(`Forwarding events of ${feed} to ${options.forwardTo}`);
    if (given === undefined) {
      io.stdout(
        `Signing secret (verify the forwards with it, as a subscription's signing_secret): ${secret}`,
      );
      io.stdout('To keep it across restarts, set MSV3_WEBHOOK_SECRET to it (or pass --secret) next time.');
    } else {
      io.stdout(`Signing with the secret from ${given.from} (${maskSigningSecret(secret)}).`);
    }
  }
  const onStop = deps.stop === undefined ? signalOnStop() : undefined;
  try {
    return await followEvents(
      { ...options, secret },
      {
        fetch: deps.fetch ?? fetch,
        now: deps.now ?? Date.now,
        pause: deps.pause ?? abortablePause,
        print: io.stdout,
        warn: io.stderr,
      },
      deps.stop ?? onStop!.signal,
    );
  } finally {
    onStop?.release();
  }
}
