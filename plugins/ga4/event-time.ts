// When GA4 is told an event happened: the time a rule gives (`timestamp_micros`), else when
// tracklane received it, kept inside what GA4 records: at most 72 hours back, never after it
// was received (not "never after now": the same event built again later gives the same bytes).
// GA4 itself moves an older time to "72 hours ago" (validation_behavior RELAXED); doing it
// here makes the request say what GA4 will record, and lets the caller warn and drop the session.

const HOUR_MS = 3_600_000;
/** How far back the Measurement Protocol accepts a timestamp. */
export const MAX_AGE_MS = 72 * HOUR_MS;
/** A moved time lands this far inside the window, so it is still inside when the request arrives. */
export const CLAMP_MARGIN_MS = 60_000;

export interface EventTime {
  micros: number;
  /** Whether the event's time was older than GA4 takes (it was moved forward). */
  tooOld: boolean;
}

/** The event's time in microseconds, from a rule's `timestamp_micros` (a positive number) or `receivedAt`. */
export function eventTime(ruleMicros: unknown, receivedAt: number, now: number): EventTime {
  const own = typeof ruleMicros === 'number' && Number.isFinite(ruleMicros) && ruleMicros > 0
    ? Math.round(ruleMicros)
    : receivedAt * 1000;
  const earliest = (now - MAX_AGE_MS + CLAMP_MARGIN_MS) * 1000;
  const tooOld = own < (now - MAX_AGE_MS) * 1000;
  return { micros: Math.min(Math.max(own, earliest), Math.max(receivedAt * 1000, earliest)), tooOld };
}
