// The event writer: the one object intake stores events through, built here and only here (by
// createApp, src/app.ts, for every route that stores: endpoints 1 and 3, batch intake, custom
// endpoints). A call goes:
//   1. commit: it joins the group commit (src/store/event-writer.ts): the calls of one event-loop
//      turn share one transaction (on SQLite it runs on the store's commit thread,
//      src/store/sqlite/writer-thread.ts; next, on that thread: the INSERT of
//      src/store/sqlite/append-events.ts);
//   2. wake delivery: after a commit that stored an accepted event, once per commit (next, to
//      the delivery thread: src/delivery/delivery-thread-host.ts wake(), which the server's
//      wakeDelivery, commit-wake.ts committed(), calls once delivery runs); the message carries
//      no event: the fan-out (src/delivery/fan-out.ts) reads accepted events from the store;
//   3. publish: the call's committed rows go on the live feed (src/intake/intake-feed.ts);
// then it resolves with the stored statuses, and the route answers the request.
import { createEventWriter, type EventWriter } from '../store/event-writer.ts';
import type { Store } from '../store/types.ts';
import type { IntakeFeed } from './intake-feed.ts';

/** Intake transactions in flight at once on PostgreSQL (each holds one pool connection); SQLite commits one at a time. */
export const PG_INTAKE_COMMITS = 4;

export interface IntakeWriterOptions {
  /** Where committed rows are announced (the admin API's live stream). */
  feed: IntakeFeed;
  /**
   * Delivery's wake, called after each commit that stored an accepted event. The server's is
   * `committed` of src/delivery/commit-wake.ts, which reaches the delivery thread once it runs;
   * without it nothing is woken and delivery finds the events on its next look.
   */
  wakeDelivery?: () => void;
  /** After each commit, with the number of rows it held (metrics). */
  onBatch?: (n: number) => void;
  /** Events waiting for a commit at most (INTAKE_MAX_PENDING); default MAX_PENDING_EVENTS. */
  maxPending?: number;
}

export function createIntakeWriter(store: Pick<Store, 'kind' | 'events'>, opts: IntakeWriterOptions): EventWriter {
  // 1 (commit) and 2 (wake delivery, from inside the group commit, once per commit).
  const commits = createEventWriter(store.events, {
    onBatch: opts.onBatch, onCommitted: opts.wakeDelivery, maxPending: opts.maxPending,
    concurrency: store.kind === 'postgres' ? PG_INTAKE_COMMITS : 1,
  });
  // 3 (publish), per call, after its commit.
  const { feed } = opts;
  return {
    ...commits,
    async write(row) {
      const status = await commits.write(row);
      feed.publish([row], [status]);
      return status;
    },
    async writeMany(rows) {
      const statuses = await commits.writeMany(rows);
      feed.publish(rows, statuses);
      return statuses;
    },
  };
}
