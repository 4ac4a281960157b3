/**
 * The slow wholesaler of bench/overload: a bare node:http server on 127.0.0.1 in its own process (forked
 * by run.ts) that answers every request after a fixed delay with a `verfuegbarkeitAnfragen` answer for one
 * article: the first article of the canned, schema-valid 50-article v2 answer of bench/codec/envelopes.ts. It records how busy it was: requests
 * answered, the most it held at once, and the time-weighted number of requests it held over a window
 * (how many of the gateway's slots were really in use, insensitive to where a window cuts a 2 s call), and
 * the mean gap on a connection between an answer and the next request (the gateway's turnaround).
 * argv: [delay in ms] (default 2000).
 * IPC: → {port}; ← {window: 'start'} resets the counters; ← {report: true} → {report}; ← {stop: true}.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { va50Response } from '../codec/envelopes.js';

/** The first article of the canned 50-article answer only: the benchmark asks for that one article. */
function oneArticleAnswer(): string {
  const full = va50Response();
  const end = '        </m:Artikel>\n';
  return full.slice(0, full.indexOf(end) + end.length) + full.slice(full.indexOf('      </return>'));
}

const answer = Buffer.from(oneArticleAnswer(), 'utf8');
const headers = {
  'content-type': 'application/soap+xml; charset=utf-8',
  'content-length': String(answer.length),
};
const delayMs = Number(process.argv[2] ?? 2_000);

let windowStart = performance.now();
let answered = 0;
let holding = 0;
let peakHolding = 0;
/** Integral of `holding` over time since `windowStart`, in request·ms. */
let heldMs = 0;
let lastChange = windowStart;

function account(): void {
  const now = performance.now();
  heldMs += holding * (now - lastChange);
  lastChange = now;
}

/** Per connection: when its last answer was written; the gap to its next request is the gateway's turnaround. */
const lastAnswer = new WeakMap<object, number>();
let gaps = 0;
let gapMs = 0;

const server = createServer((req, res) => {
  const previous = lastAnswer.get(req.socket);
  if (previous !== undefined) {
    gaps++;
    gapMs += performance.now() - previous;
  }
  req.resume();
  req.on('end', () => {
    account();
    holding++;
    peakHolding = Math.max(peakHolding, holding);
    const timer = setTimeout(() => answerWith(res), delayMs);
    res.on('close', () => {
      clearTimeout(timer);
      if (!res.writableEnded) {
        account();
        holding--;
      }
    });
  });
});
server.keepAliveTimeout = 120_000;
server.headersTimeout = 130_000;
server.requestTimeout = 0;

function answerWith(res: ServerResponse): void {
  account();
  holding--;
  answered++;
  res.writeHead(200, headers);
  res.end(answer);
  lastAnswer.set(res.socket ?? res, performance.now());
}

process.on('message', (message: { window?: 'start'; report?: boolean; stop?: boolean }) => {
  if (message.window === 'start') {
    account();
    windowStart = performance.now();
    lastChange = windowStart;
    answered = 0;
    heldMs = 0;
    gaps = 0;
    gapMs = 0;
    peakHolding = holding;
  }
  if (message.report) {
    account();
    const elapsedMs = performance.now() - windowStart;
    process.send?.({
      report: {
        answered,
        peakHolding,
        meanHolding: elapsedMs > 0 ? heldMs / elapsedMs : 0,
        elapsedMs,
        meanGapMs: gaps > 0 ? gapMs / gaps : null,
      },
    });
  }
  if (message.stop) {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});
// Never outlive the runner.
process.on('disconnect', () => process.exit(0));

server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => {
  process.send?.({ port: (server.address() as AddressInfo).port });
});
