// Intake's group commit: requests that arrive in the same event-loop turn share one
// transaction, and each is acknowledged only after that transaction commits. With the
// store's writer thread (SqliteOptions.writerThread) the event loop keeps serving requests
// during that commit, so the next batch gathers while the current one is in insert + fsync.
import { createGroupCommit } from './group-commit.ts';
import type { EventRecord, EventStatus, EventStore } from './types.ts';

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
  opts: { maxBatch?: number; onBatch?: (n: number) => void; maxPending?: number; concurrency?: number } = {},
): EventWriter {
  const group = createGroupCommit((rows: EventRecord[]) => store.append(rows), {
    maxBatch: opts.maxBatch ?? 512, onBatch: opts.onBatch, maxQueue: opts.maxPending ?? MAX_PENDING_EVENTS, concurrency: opts.concurrency,
  });
  return { write: group.submit, writeMany: group.submitMany, drain: group.drain, full: group.full };
}
