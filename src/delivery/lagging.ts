// When a destination is lagging: work due for it has waited past its due time for longer than
// LAGGING_AFTER_MS while it is enabled and not paused. A lane keeping up claims due work within
// a second or two (handed-off work is leased, so never overdue; retries are claimed as they come
// due), so a minute overdue means the destination is slower than its traffic (a receiver that
// hangs on some requests, too few slots) although nothing fails. Read from the store, so the
// gauges, `stats` and the admin API agree.

export const LAGGING_AFTER_MS = 60_000;

/** How long the oldest due pending delivery has waited past its due time (0: nothing due). */
export function overdueMs(nextDueAt: number | null, now: number): number {
  return nextDueAt === null ? 0 : Math.max(0, now - nextDueAt);
}

export function isLagging(d: { enabled: boolean; paused: boolean; nextDueAt: number | null }, now: number): boolean {
  return d.enabled && !d.paused && overdueMs(d.nextDueAt, now) > LAGGING_AFTER_MS;
}
