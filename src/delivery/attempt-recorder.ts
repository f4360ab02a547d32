// Group commit for attempt results: every result that arrives within a few milliseconds
// is written in one transaction, so many concurrent sends cost one commit, not one each.
// A commit that fails (the database restarting or unreachable) is tried again with the
// store-error backoff for about half a minute: the request already went out, and
// recording it while the lease still holds is what keeps it from being sent again.
// Retrying is safe: the delivery updates are fenced by claim id.
import { createGroupCommit } from '../store/group-commit.ts';
import { storeErrorBackoffMs } from './retry-policy.ts';
import type { EventSettler } from './event-settler.ts';
import type { DeliveryStore, AttemptRecord, RecordResult, UnstoredRow } from './types.ts';

export interface AttemptRecorder {
  /** Resolves once the attempt and its delivery updates are committed. */
  record(rec: AttemptRecord): Promise<RecordResult>;
  /** Resolves when nothing is waiting to be written. */
  drain(): Promise<void>;
}

/**
 * How long a batch of results waits for more before it commits. A send slot is free before its
 * result is recorded, so nothing waits on this but the lease (a minute): commits of ~25 results
 * instead of ~7 cost a third less per result (measured with the 20,000-event drain).
 */
export const RECORD_LINGER_MS = 3;

/** Tries per batch: 250 ms doubling to 5 s between them, about 28 s in all. */
export const RECORD_TRIES = 10;

export function createAttemptRecorder(
  store: Pick<DeliveryStore, 'recordAttempts'>,
  maxBatch = 256,
  opts: {
    tries?: number; wait?: (ms: number) => Promise<void>; lingerMs?: number;
    /** Told of the handed-off deliveries' rows each commit wrote (event-settler.ts); absent: nothing is handed off (tests). */
    settler?: Pick<EventSettler, 'rowsWritten'>;
  } = {},
): AttemptRecorder {
  const tries = opts.tries ?? RECORD_TRIES;
  const wait = opts.wait ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const commit = async (records: AttemptRecord[]): Promise<RecordResult[]> => {
    for (let attempt = 1; ; attempt++) {
      try {
        const results = await store.recordAttempts(records);
        // Committed: the handed-off deliveries these records carried have their rows now
        // (inserted, or there already). An event whose last handed-off delivery this was
        // leaves the dispatch queue here (rowsWritten → the settler's leaveQueue).
        opts.settler?.rowsWritten(handedOffRows(records));
        return results;
      } catch (err) {
        if (attempt >= tries) throw err;
        await wait(storeErrorBackoffMs(attempt, Math.random));
      }
    }
  };
  const group = createGroupCommit(commit, { maxBatch, lingerMs: opts.lingerMs ?? RECORD_LINGER_MS });
  return { record: group.submit, drain: group.drain };
}

/** The rows of the handed-off deliveries among the records' updates (those written by this commit). */
function handedOffRows(records: readonly AttemptRecord[]): UnstoredRow[] {
  const rows: UnstoredRow[] = [];
  for (const rec of records) for (const u of rec.updates) if (u.row !== undefined) rows.push(u.row);
  return rows;
}
