/**
 * The benchmark's webhook receiver: a bare node:http server on 127.0.0.1 in its own process (forked by
 * run.ts), answering 200 at once and noting when each webhook-id first arrived (epoch ms, µs resolution).
 * Protocol over IPC: → {ready, port}; ← {expect: n} → {reached: n} once n requests have arrived;
 * ← {report: true} → {arrivals: [[id, ms], …], requests}; ← {reset: true} clears.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const now = () => performance.timeOrigin + performance.now();
let arrivals = new Map<string, number>();
let requests = 0;
let expected = Number.POSITIVE_INFINITY;

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    requests += 1;
    const id = String(req.headers['webhook-id']);
    if (!arrivals.has(id)) arrivals.set(id, now());
    res.writeHead(200, { 'content-length': '0' });
    res.end();
    if (requests === expected) process.send?.({ reached: requests });
  });
});
server.keepAliveTimeout = 10_000;

process.on('message', (message: { expect?: number; report?: boolean; reset?: boolean; stop?: boolean }) => {
  if (message.reset) {
    arrivals = new Map();
    requests = 0;
    expected = Number.POSITIVE_INFINITY;
  }
  if (message.expect !== undefined) {
    expected = message.expect;
    if (requests >= expected) process.send?.({ reached: requests });
  }
  if (message.report) process.send?.({ arrivals: [...arrivals], requests });
  if (message.stop) server.close(() => process.exit(0));
});

server.listen(0, '127.0.0.1', () => {
  process.send?.({ ready: true, port: (server.address() as AddressInfo).port });
});
