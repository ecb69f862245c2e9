/** fn over items with at most `limit` running at once, results in item order; the first failure stops the rest. */
export async function mapConcurrent<T, R>(
  items: readonly T[],
  limit: number,
  signal: AbortSignal | undefined,
  fn: (item: T, signal: AbortSignal) => Promise<R>,
): Promise<R[]> {
  const stop = new AbortController();
  const combined = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal;
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length && !combined.aborted) {
      const index = next++;
      results[index] = await fn(items[index] as T, combined);
    }
  };
  const workers = Array.from({ length: Math.min(Math.max(1, limit), items.length) }, () => worker());
  try {
    await Promise.all(workers);
  } catch (error) {
    // The requests still running are aborted and awaited, so none outlives the call.
    stop.abort(error);
    await Promise.allSettled(workers);
    throw error;
  }
  combined.throwIfAborted();
  return results;
}
