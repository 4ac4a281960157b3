/**
 * The pass-through baseline of bench/gateway in its own process (forked by run.ts); the app itself is
 * bench/gateway/baseline-app.ts.
 * IPC: ← {answer: json} → {answerSet}; → {ready, port}; ← {stop: true} closes and exits.
 * argv: the upstream URL (…/msv3/v2.0/verfuegbarkeitAnfragen), upstream connections, [decode | spin=<µs>].
 */
import type { AddressInfo } from 'node:net';
import { buildBaselineApp } from './baseline-app.js';

const baseline = buildBaselineApp(
  process.argv[2]!,
  Number(process.argv[3] ?? 16),
  process.argv[4] === 'decode',
  process.argv[4]?.startsWith('spin=') ? Number(process.argv[4].slice(5)) : 0,
);

process.on('message', (message: { answer?: string; stop?: boolean }) => {
  if (message.answer !== undefined) {
    baseline.setAnswer(message.answer);
    process.send?.({ answerSet: true });
  }
  if (message.stop) void baseline.close().finally(() => process.exit(0));
});
process.on('disconnect', () => process.exit(0));

await baseline.app.listen({ host: '127.0.0.1', port: 0 });
process.send?.({ ready: true, port: (baseline.app.server.address() as AddressInfo).port });
