/**
 * Group commit: items submitted while a write is running are written together by the next one, so
 * attempts that finish at about the same time share one transaction.
 */
export function createBatcher<T, R>(
  write: (items: T[]) => Promise<R[]>,
  maxBatch: number,
): { submit(item: T): Promise<R> } {
  let queue: { item: T; resolve(result: R): void; reject(error: unknown): void }[] = [];
  let writing = false;

  async function drain(): Promise<void> {
    writing = true;
    while (queue.length > 0) {
      const batch = queue.slice(0, maxBatch);
      queue = queue.slice(batch.length);
      try {
        const results = await write(batch.map((entry) => entry.item));
        for (const [i, entry] of batch.entries()) entry.resolve(results[i]!);
      } catch (error) {
        for (const entry of batch) entry.reject(error);
      }
    }
    writing = false;
  }

  return {
    submit(item) {
      return new Promise<R>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        if (!writing) {
          writing = true;
          // Let the attempts that finish in this turn of the event loop join the batch.
          setImmediate(() => void drain());
        }
      });
    },
  };
}
