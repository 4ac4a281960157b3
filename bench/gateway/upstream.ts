/**
 * The canned MSV3 upstream of bench/gateway: a bare node:http server on 127.0.0.1 in its own process
 * (forked by run.ts). It reads each request body and answers with the same pre-built 50-article v2
 * `verfuegbarkeitAnfragen` answer from bench/codec/envelopes.ts (schema-valid; validated with xmllint by
 * `npm run bench:codec`), as `application/soap+xml`, keeping the connection alive. It checks nothing, so
 * its cost per call is the floor both the gateway and the baseline pay.
 * argv: [delay in ms] before each answer (default 0), to stand in for a wholesaler's own processing time.
 * IPC: → {ready, port}; ← {report: true} → {requests}; ← {stop: true} closes and exits.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { va50Response } from '../codec/envelopes.js';

const answer = Buffer.from(va50Response(), 'utf8');
const headers = {
  'content-type': 'application/soap+xml; charset=utf-8',
  'content-length': String(answer.length),
};
const delayMs = Number(process.argv[2] ?? 0);
let requests = 0;

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    requests += 1;
    if (delayMs > 0) setTimeout(() => answerWith(res), delayMs);
    else answerWith(res);
  });
});
server.keepAliveTimeout = 60_000;

function answerWith(res: ServerResponse): void {
  res.writeHead(200, headers);
  res.end(answer);
}

process.on('message', (message: { report?: boolean; stop?: boolean }) => {
  if (message.report) process.send?.({ requests });
  if (message.stop) {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});
// Never outlive the runner.
process.on('disconnect', () => process.exit(0));

server.listen(0, '127.0.0.1', () => {
  process.send?.({ ready: true, port: (server.address() as AddressInfo).port, bytes: answer.length });
});
