// Intake's group commit, the commit step of the event writer (src/intake/intake-writer.ts builds
// the one the routes use on top of it): requests that arrive in the same event-loop turn share
// one transaction, and each is acknowledged only after that transaction commits. On SQLite the
// commit runs on the store's commit thread (src/store/sqlite/writer-thread.ts, its code in
// writer-worker.ts; on unless TRACKLANE_WRITER_THREAD=0), so the event loop keeps serving
// requests during that commit and the next batch gathers while the current one is in insert +
// fsync.
import { createGroupCommit } from './group-commit.ts';
import type { EventRecord, EventStatus, EventStore } from './types.ts';

/** What intake stores events through (the routes get the one createIntakeWriter builds). */
export interface EventWriter {
  /** Resolves with the stored status once `row` is durably committed; rejects when the commit failed. */
  write(row: EventRecord): Promise<EventStatus>;
  /** Commits every row in one transaction, all or none; status `i` belongs to row `i`. */
  writeMany(rows: readonly EventRecord[]): Promise<EventStatus[]>;
  /** Resolves when nothing is waiting to be written. */
  drain(): Promise<void>;
  /** Whether INTAKE_MAX_PENDING events already wait: intake refuses at its door, before reading a request. */
  full(): boolean;
}

/** Events waiting for a commit at most; past it intake answers 503 at once (back-pressure). */
export const MAX_PENDING_EVENTS = 20_000;

export function createEventWriter(
  store: EventStore,
  opts: {
    maxBatch?: number;
    /** After each commit, with the number of rows it held (metrics). */
    onBatch?: (n: number) => void;
    /** After each commit that stored an accepted event: delivery's wake-up (the event writer's `wakeDelivery`, src/intake/intake-writer.ts). */
    onCommitted?: () => void;
    maxPending?: number;
    concurrency?: number;
  } = {},
): EventWriter {
  const onCommitted = opts.onCommitted;
  const append = onCommitted === undefined ? (rows: EventRecord[]) => store.append(rows) : async (rows: EventRecord[]) => {
    const statuses = await store.append(rows);
    if (statuses.includes('accepted')) onCommitted();
    return statuses;
  };
  const group = createGroupCommit(append, {
    maxBatch: opts.maxBatch ?? 512, onBatch: opts.onBatch, maxQueue: opts.maxPending ?? MAX_PENDING_EVENTS, concurrency: opts.concurrency,
  });
  return { write: group.submit, writeMany: group.submitMany, drain: group.drain, full: group.full };
}
