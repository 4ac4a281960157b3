import { GCProfiler, getHeapStatistics } from 'node:v8';

/**
 * The bytes allocated on V8's heap while `work` runs: what the heap grew by, plus what each garbage
 * collection in between freed (`v8.GCProfiler`). The whole process counts; buffers outside the heap
 * (sockets' chunks) do not. Allocation does not change with the machine's load, so budgets on it hold
 * on any machine (test/request-cost.test.ts; the cost ledger, bench/gateway/allocations.ts).
 */
export async function allocatedBytes(work: () => Promise<void>): Promise<number> {
  const profiler = new GCProfiler();
  const start = getHeapStatistics().used_heap_size;
  profiler.start();
  await work();
  const end = getHeapStatistics().used_heap_size;
  let freed = 0;
  for (const gc of profiler.stop()?.statistics ?? [])
    freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize;
  return end - start + freed;
}
