/**
 * What the gateway allocates per request, for the cost ledger (ledger.ts). Every object a request
 * creates costs its allocation and, once dead, a share of the young generation's scavenges: garbage
 * collection is 8 % of the gateway's CPU under wrk. Two measures:
 *
 * - `allocatedBytes` (test/allocated-bytes.ts, which the request-cost test shares): the bytes
 *   allocated on V8's heap while some work runs.
 * - `allocationShares`: V8's sampling heap profiler (a sample every SAMPLING_BYTES on average, objects
 *   that later died included), each sample counted for the stage of its stack (stages.ts).
 */
import { Session } from 'node:inspector/promises';
import { type Frame, type StageProfile, stageTally } from './stages.js';

/** The heap profiler's mean sampling interval, bytes. */
const SAMPLING_BYTES = 1024;

interface HeapNode extends Frame {
  callFrame: Frame['callFrame'] & { lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}

/** Each stage's share of the bytes allocated while `work` runs, and the functions that allocated most. */
export async function allocationShares(work: () => Promise<void>): Promise<StageProfile> {
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: SAMPLING_BYTES,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  await work();
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: { head: HeapNode } };
  session.disconnect();

  const parent = new Map<HeapNode, HeapNode>();
  const tally = stageTally<HeapNode>((child) => parent.get(child));
  const visit = (node: HeapNode) => {
    if (node.selfSize > 0) tally.add(node, node.selfSize);
    for (const child of node.children) {
      parent.set(child, node);
      visit(child);
    }
  };
  visit(profile.head);
  return tally.result();
}
