// From "an intake commit stored accepted events" to "the fan-out runs", in one place. The
// event writer calls committed() after each commit that accepted something (its
// `wakeDelivery`, src/intake/intake-writer.ts); delivery, once it runs, is attached as the
// target by src/server.ts: the delivery thread's host (delivery-thread-host.ts wake(): one message per
// event-loop turn → in-delivery-thread.ts → dispatcher.wake()), or a dispatcher in this thread
// (dispatcher.wake()). dispatcher.wake() ends the fan-out loop's wait between passes, or, when
// it comes during a pass, makes the loop pass again at once (fan-out-loop.ts wakeFanOut), so the
// events are claimed at once instead of at the next look (50 ms to 1 s, on the thread's poll
// tick once it waits a second: poll-tick.ts). Before delivery starts, or while it is
// stopped, a commit wakes nothing: the events wait in the store for its first pass.
export interface CommitWake {
  /** An intake commit stored accepted events. */
  committed(): void;
  /** Delivery is running: commits wake `target` from now on (null: nothing, e.g. while stopping). */
  attach(target: (() => void) | null): void;
}

export function createCommitWake(): CommitWake {
  let target: (() => void) | null = null;
  return {
    committed() {
      // next (to the delivery thread): delivery-thread-host.ts wake(), attached by src/server.ts.
      target?.();
    },
    attach(t) {
      target = t;
    },
  };
}
