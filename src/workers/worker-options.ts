// Options for tracklane's own worker threads (delivery, SQLite intake commits, hashing, custom
// endpoint handlers): their V8 heap settings and the node flags they inherit.
//
// V8 lets each thread's young generation grow to 48 MB (two 16 MB semi-spaces and a
// promotion area), and an idle server already has it grown to the full size after
// loading the TypeScript modules; with four to six threads that is a large share of
// the process's memory. Measured on the backlog drain (20,000 events × 4 destinations),
// young generations of 12 MB (4 MB semi-spaces) used no more CPU than the default,
// while the idle server took ~50 MB less. The main (HTTP) thread's young generation is set
// by the node flag `--max-semi-space-size=8` in `npm start` and the `tracklane` executable:
// twice the workers', as its requests in flight outlived a 4 MB nursery (README, "Memory
// and node flags"). Their other flags, `--no-parallel-scavenge` and `--heap-growing-percent`, apply to every thread.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

/** Young generation of each internal worker thread: 12 MB = 4 MB semi-spaces. */
export const WORKER_YOUNG_GENERATION_MB = 12;

/**
 * `resourceLimits` for `new Worker()` / piscina. Without `oldGenerationMb` the old generation
 * is V8's default (an out-of-memory limit would kill a busy pool thread). With it, a thread
 * that outgrows it dies alone with ERR_WORKER_OUT_OF_MEMORY (the process and its other
 * threads carry on), instead of growing until the whole process runs out: the delivery
 * thread sets it (DELIVERY_MEMORY_MB), as one event's runaway mapping must cost that thread
 * a restart, not the service.
 */
export const workerResourceLimits = (oldGenerationMb?: number): { maxYoungGenerationSizeMb: number; maxOldGenerationSizeMb?: number } =>
  oldGenerationMb === undefined
    ? { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB }
    : { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB, maxOldGenerationSizeMb: oldGenerationMb };

/** Node flags a worker thread accepts and needs: module loading, warnings, source maps, profiling. */
const WITH_VALUE = new Set(['--import', '--require', '-r', '--loader', '--experimental-loader', '--conditions', '-C']);
const KEPT = /^(--(import|require|loader|experimental-loader|conditions)=|--(enable-source-maps|no-warnings|no-deprecation|trace-warnings|trace-uncaught|pending-deprecation)$|--(cpu|heap)-prof(-[a-z]+)?(=|$)|--(no-)?experimental-)/;

/**
 * The node flags for a worker that runs `file`: of this thread's flags, those a worker
 * accepts and needs (above), plus the tsx loader when `file` is TypeScript and they lack it.
 * `new Worker()` refuses V8 and per-process flags in `execArgv` (`--max-old-space-size`,
 * `--max-semi-space-size`, `--stack-size`, `--expose-gc`, `--title`, …:
 * ERR_WORKER_INVALID_EXEC_ARGV), so a thread inheriting an operator's command line as it
 * stands would never start; resourceLimits size a thread's heap instead. tsx is added,
 * resolved from here, when it was registered some other way (its `register()` API); on
 * Node 20 tsx installs only its require hook in worker threads, so a worker's TypeScript
 * module is loaded through `require`, as CommonJS-transpiled TS.
 */
export function workerExecArgv(file: string): string[] {
  const inherited = workerFlags(process.execArgv);
  if (!file.endsWith('.ts') || inherited.some((arg) => arg.includes('tsx'))) return inherited;
  // createRequire: import.meta.resolve does not exist under tsx's require hook (npm start's entry).
  return [...inherited, '--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href];
}

export function workerFlags(flags: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < flags.length; i++) {
    if (WITH_VALUE.has(flags[i]) && i + 1 < flags.length) kept.push(flags[i], flags[++i]);
    else if (KEPT.test(flags[i])) kept.push(flags[i]);
  }
  return kept;
}
