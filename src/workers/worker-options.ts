// Options for tracklane's own worker threads (delivery, event writer, hashing, custom
// endpoint handlers): their V8 heap settings and the node flags they inherit.
//
// V8 lets each thread's young generation grow to 48 MB (two 16 MB semi-spaces and a
// promotion area), and an idle server already has it grown to the full size after
// loading the TypeScript modules; with four to six threads that is a large share of
// the process's memory. Measured on the backlog drain (20,000 events × 4 destinations),
// young generations of 12 MB (4 MB semi-spaces) used no more CPU than the default,
// while the idle server took ~50 MB less. The main thread gets the same size from the
// node flag `--max-semi-space-size=4` in `npm start` and the `tracklane` executable.

/** Young generation of each internal worker thread: 12 MB = 4 MB semi-spaces. */
export const WORKER_YOUNG_GENERATION_MB = 12;

/** `resourceLimits` for `new Worker()` / piscina. The old generation stays unbounded (an out-of-memory limit would kill a busy thread). */
export const workerResourceLimits = (): { maxYoungGenerationSizeMb: number } => ({ maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB });

/**
 * Heap-sizing flags (`--max-old-space-size=512`, `--max-semi-space-size=4`, …) size the
 * whole process; `new Worker()` refuses them in `execArgv` (ERR_WORKER_INVALID_EXEC_ARGV),
 * so a thread inheriting them from the command line would never start.
 */
const HEAP_SIZE_FLAG = /^--(max|min|initial)[-_][\w-]*(space|heap)[-_]size=/;

/**
 * The node flags for a worker that runs `file`: this thread's own flags without the
 * heap-sizing ones (resourceLimits size a thread), plus the tsx loader when `file` is
 * TypeScript and the flags lack it.
 */
export function workerExecArgv(file: string): string[] {
  const inherited = withoutHeapSizing(process.execArgv);
  if (!file.endsWith('.ts') || inherited.some((arg) => arg.includes('tsx'))) return inherited;
  return [...inherited, '--import', import.meta.resolve('tsx')];
}

/** V8 takes these flags only in the `--flag=value` form, so each is one argument. */
export const withoutHeapSizing = (flags: readonly string[]): string[] => flags.filter((flag) => !HEAP_SIZE_FLAG.test(flag));
