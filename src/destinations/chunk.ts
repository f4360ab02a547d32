// Splitting a plugin's events into requests of at most `batch.maxEvents`, order kept, so
// every plugin that batches cuts its lists the same way.

/**
 * @example chunk([1, 2, 3, 4, 5], 2) // → [[1, 2], [3, 4], [5]]
 */
export function chunk<T>(list: readonly T[], size: number): T[][] {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`chunk size must be a positive integer, got ${size}`);
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

/**
 * `list` cut into the batches one buildRequests call may take: at most the plugin's
 * `batch.maxEvents` each. The core's one place for it (preview builds, the send lane).
 */
export function batchesFor<T>(plugin: { batch: { maxEvents: number } }, list: readonly T[]): T[][] {
  return chunk(list, Math.max(1, Math.floor(plugin.batch.maxEvents) || 1));
}
