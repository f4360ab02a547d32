// Stops the server when the process that started it is gone. npm and npx run the server
// under `sh -c` and forward a supervisor's SIGTERM to that shell alone; the shell (dash)
// dies without passing it on, and the server, re-parented, would keep serving unseen.
import { every, TICK_MS } from './poll-tick.ts';

/**
 * How often the parent is checked: a getppid() call, on the thread's poll tick (poll-tick.ts),
 * so it adds no wake of its own to an idle server.
 */
export const PARENT_CHECK_MS = TICK_MS;

/**
 * Whether the process was started by a package manager's script runner (npm start, npx,
 * pnpm, yarn), which set npm_lifecycle_event for the script. A server started otherwise
 * (a unit file, `node src/index.cjs &` in a script that then exits) is left alone.
 */
export function startedByScriptRunner(env: NodeJS.ProcessEnv): boolean {
  return typeof env.npm_lifecycle_event === 'string' && env.npm_lifecycle_event !== '';
}

/**
 * Calls `onParentGone` once the process's parent is no longer `parent` (it exited and the
 * process was re-parented to init or a subreaper). The check does not keep the process alive.
 * @example
 * const launcher = process.ppid; // at start
 * const stopWatching = watchParent(launcher, () => stop('parent process exited'));
 */
export function watchParent(parent: number, onParentGone: () => void, everyMs = PARENT_CHECK_MS): () => void {
  const stop = every(everyMs, function checkParent() {
    if (process.ppid === parent) return;
    stop();
    onParentGone();
  });
  return stop;
}
