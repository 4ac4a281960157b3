import { describe, expect, it } from 'vitest';
import { runCli } from '../../cli.js';
import { generateSigningSecret } from '../subscriptions/secrets.js';
import { verifyWebhook } from '../verify.js';
import { runListenCommand } from './listen-command.js';

/** `msv3-gateway listen`: its help, its options, and what it prints at start. */

async function run(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, { env, stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
  return { code, out, err };
}

describe('msv3-gateway listen: the command line', () => {
  it('explains itself with --help', async () => {
    const { code, out } = await run(['listen', '--help']);
    expect(code).toBe(0);
    expect(out[0]).toBe(
      'Usage: msv3-gateway listen (--forward-to URL | --print) [--events TYPE,…] [--wholesaler ID] [--since EVT_ID] [--once] [--interval MS] [--url GATEWAY_URL] [--key API_KEY] [--secret WHSEC]',
    );
    expect(out[1]).toContain('MSV3_API_KEY');
    expect(out[1]).toContain('order.status_changed');
  });

  it.each([
    [[], {}, 'give either --forward-to URL (a receiver) or --print (events on stdout)'],
    [
      ['--forward-to', 'http://localhost:3000/hooks', '--print', '--key', 'pk_test_x'],
      {},
      'give either --forward-to URL (a receiver) or --print (events on stdout)',
    ],
    [['--forward-to', 'http://localhost:3000/hooks'], {}, 'an API key is required: --key or MSV3_API_KEY'],
    [
      ['--forward-to', 'ftp://localhost/hooks', '--key', 'pk_test_x'],
      {},
      '--forward-to must be an http:// or https:// URL',
    ],
    [
      [
        '--forward-to',
        'http://localhost:3000/hooks',
        '--key',
        'pk_test_x',
        '--events',
        'order.status_changed,order.created',
      ],
      {},
      '--events: unknown event type order.created; the types are delivery.received, delivery.shortage, order.status_changed, order.fulfilled, wholesaler.status_changed',
    ],
    [
      ['--forward-to', 'http://localhost:3000/hooks', '--key', 'pk_test_x', '--since', '42'],
      {},
      '--since must be an event id, evt_…',
    ],
    [
      ['--forward-to', 'http://localhost:3000/hooks', '--key', 'pk_test_x', '--interval', '10'],
      {},
      '--interval must be a number of milliseconds, at least 100',
    ],
    [
      ['--forward-to', 'http://localhost:3000/hooks'],
      { MSV3_API_KEY: 'pk_test_x', MSV3_GATEWAY_URL: 'gateway' },
      'MSV3_GATEWAY_URL must be an http:// or https:// URL',
    ],
    [
      ['--forward-to', 'http://localhost:3000/hooks', '--key', 'pk_test_x', '--secret', 'geheim'],
      {},
      "--secret must be a signing secret: whsec_ and base64, as a subscription's signing_secret or one listen printed",
    ],
    [
      ['--forward-to', 'http://localhost:3000/hooks', '--key', 'pk_test_x'],
      { MSV3_WEBHOOK_SECRET: 'whsec_short' },
      "MSV3_WEBHOOK_SECRET must be a signing secret: whsec_ and base64, as a subscription's signing_secret or one listen printed",
    ],
  ])('refuses %j (env %j) with exit code 2', async (args, env, problem) => {
    const { code, err } = await run(['listen', ...args], env);
    expect(code).toBe(2);
    expect(err[0]).toBe(`msv3-gateway listen: ${problem}`);
    expect(err[1]).toMatch(/^Usage: msv3-gateway listen \(--forward-to URL \| --print\)/);
  });

  it('prints where it forwards and a fresh whsec_ secret, takes the key and URL from the environment', async () => {
    const asked: string[] = [];
    const stop = new AbortController();
    const out: string[] = [];
    const err: string[] = [];
    const code = await runListenCommand(
      { 'forward-to': 'http://localhost:3000/hooks', events: 'delivery.received' },
      {
        env: { MSV3_API_KEY: 'pk_test_env', MSV3_GATEWAY_URL: 'http://127.0.0.1:9999/' },
        stdout: (l) => out.push(l),
        stderr: (l) => err.push(l),
      },
      {
        fetch: (async (input: string | URL | Request, init?: RequestInit) => {
          asked.push(`${String(input)} ${new Headers(init?.headers).get('x-api-key')}`);
          return new Response('{"events":[],"has_more":false}', { status: 200 });
        }) as typeof fetch,
        pause: async () => stop.abort(),
        stop: stop.signal,
      },
    );
    expect(code).toBe(0);
    expect(out[0]).toBe(
      'Forwarding events of http://127.0.0.1:9999/v1/events (delivery.received) to http://localhost:3000/hooks',
    );
    expect(out[1]).toMatch(/^Signing secret \(.*\): whsec_[A-Za-z0-9+/]{43}=$/);
    expect(out[2]).toBe(
      'To keep it across restarts, set MSV3_WEBHOOK_SECRET to it (or pass --secret) next time.',
    );
    expect(asked[0]).toBe('http://127.0.0.1:9999/v1/events?limit=1&type=delivery.received pk_test_env');
    expect(err).toEqual(['Waiting for new events. Stop with Ctrl-C.', 'msv3-gateway listen: stopped']);
  });

  it.each([
    ['--secret', (secret: string) => [{ secret }, {}]],
    ['MSV3_WEBHOOK_SECRET', (secret: string) => [{}, { MSV3_WEBHOOK_SECRET: secret }]],
  ] as const)(
    'signs with the secret from %s, the same on every start, and does not print it',
    async (from, given) => {
      const secret = generateSigningSecret();
      const [values, env] = given(secret);
      const body = JSON.stringify({
        id: 'evt_1',
        type: 'order.status_changed',
        created_at: '2026-01-05T09:00:00.000Z',
        data: {},
      });
      for (const start of [1, 2]) {
        const out: string[] = [];
        const forwarded: { body: string; headers: Record<string, string> }[] = [];
        const code = await runListenCommand(
          { 'forward-to': 'http://localhost:3000/hooks', since: 'evt_0', once: true, ...values },
          { env: { MSV3_API_KEY: 'pk_test_env', ...env }, stdout: (l) => out.push(l), stderr: () => {} },
          {
            fetch: (async (input: string | URL | Request, init?: RequestInit) => {
              const url = String(input);
              if (url.endsWith('/v1/events/evt_0'))
                return new Response(
                  '{"id":"evt_0","type":"order.status_changed","created_at":"2026-01-05T08:59:59.000Z","data":{}}',
                );
              if (url.includes('/v1/events?')) return new Response(`{"events":[${body}],"has_more":false}`);
              forwarded.push({ body: String(init?.body), headers: init?.headers as Record<string, string> });
              return new Response(null, { status: 204 });
            }) as typeof fetch,
            stop: new AbortController().signal,
          },
        );
        expect(code, `start ${start}`).toBe(0);
        expect(out[1]).toBe(`Signing with the secret from ${from} (whsec_****${secret.slice(-4)}).`);
        expect(out.join('\n')).not.toContain(secret);
        expect(forwarded).toHaveLength(1);
        expect(verifyWebhook(forwarded[0]!.body, forwarded[0]!.headers, secret).id).toBe('evt_1');
      }
    },
  );
});
