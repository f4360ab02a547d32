// What a test run must undo when it ends, however its tests ended: helpers that make
// something outside the run's scratch folder (a PostgreSQL database) register how to remove
// it here, and the root hook (hermetic.ts) runs what is still registered after the last test.
// No side effects on import, so benchmarks may use the same helpers.
type Cleanup = () => Promise<void> | void;

const pending = new Set<Cleanup>();

/** Registers `cleanup` for the end of the run; call the returned function once it is done early. */
export function atRunEnd(cleanup: Cleanup): () => void {
  pending.add(cleanup);
  return () => void pending.delete(cleanup);
}

/** Runs every registered cleanup (all of them, even when some fail), then reports the failures. */
export async function runEndCleanups(): Promise<void> {
  const due = [...pending];
  pending.clear();
  const failed = (await Promise.allSettled(due.map(async (c) => c()))).filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed.length > 0) throw new AggregateError(failed.map((f) => f.reason), `${failed.length} end-of-run cleanup(s) failed: ${failed.map((f) => String(f.reason?.message ?? f.reason)).join('; ')}`);
}
