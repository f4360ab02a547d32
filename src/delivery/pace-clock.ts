// The clocks the fan-out's pace is kept by (fan-out-loop.ts keepPace, lane-handoffs.ts
// saturated): real time, and the thread's event-loop idle time, which stands still while the
// thread is busy.

/** Where the pace's clocks stand, both in ms. */
export interface PaceClock {
  wallMs: number;
  idleMs: number;
}

/** Real time (performance.now()) and the thread's event-loop idle time so far. */
export const paceClock = (): PaceClock => ({ wallMs: performance.now(), idleMs: performance.eventLoopUtilization().idle });

/** However busy the thread, a lane short of room that frees none is waited for at most this many patiences of real time. */
export const PACE_BUSY_PATIENCE_FACTOR = 20;
