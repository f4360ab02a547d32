// Stops the server when the process that started it is gone. npm and npx run the server
// under `sh -c` and forward a supervisor's SIGTERM to that shell alone; the shell (dash)
// dies without passing it on, and the server, re-parented, would keep serving unseen.

/** How often the parent is checked: a getppid() call, cheap enough to keep the delay short. */
export const PARENT_CHECK_MS = 500;

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
  const timer = setInterval(function checkParent() {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onParentGone();
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
