// A gate in front of a worker pool: at most `slots` tasks hold a thread at once, the others
// wait here in arrival order (not in the pool's own queue), so a task's time limit can start
// when it gets a thread rather than when it was queued. With `maxWaiting`, one more waiter
// than that is refused at once.

export interface TaskGate {
  /** Resolves once a slot is this caller's; throws `full()` when `maxWaiting` are already waiting. */
  enter(): Promise<void>;
  /** Gives the slot back (to the first waiter, if any). Call once per enter(), in a `finally`. */
  leave(): void;
}

export function createTaskGate(slots: number, opts: { maxWaiting?: number; full?: () => Error } = {}): TaskGate {
  const maxWaiting = opts.maxWaiting ?? Infinity;
  let busy = 0;
  const waiting: (() => void)[] = [];
  return {
    async enter() {
      if (busy < slots) return void busy++;
      if (waiting.length >= maxWaiting) throw opts.full?.() ?? new Error(`${maxWaiting} tasks are already waiting`);
      // The slot is handed over by leave(): busy stays as it is.
      await new Promise<void>((resolve) => waiting.push(resolve));
    },
    leave() {
      const next = waiting.shift();
      if (next) next();
      else busy--;
    },
  };
}
