// When an event leaves the dispatch queue after its fan-out handed deliveries off. Those
// deliveries have no rows until their attempts are recorded (or they are stored first: handed
// back, or still in their lane after a while), so the event stays queued, leased to the
// fan-out's claim: should the process stop first, the event is fanned out again for the rows
// it lacks. The settler counts each event's handed-off deliveries down as their rows are
// committed (`rowsWritten`, called by the attempt recorder's commit; `store`) and removes the
// events whose count reaches zero from the queue (`leaveQueue`, a batch per turn of the event
// loop). An event whose count never reaches zero (a record that failed) is forgotten once its
// lease ends; its lease then brings it back to the fan-out.
import type { DeliveryStore, LaneLogger, UnstoredRow } from './types.ts';

/** What a fan-out pass handed one lane: under its lease, deliveries of events. */
interface HandedOff {
  leaseUntil: number;
  deliveries: readonly { eventSeq: number }[];
}

export interface EventSettler {
  /** The fan-out pass under `claimId` handed these off: their events wait for as many rows each. */
  expect(claimId: string, handoffs: Iterable<HandedOff>): void;
  /** These handed-off deliveries have rows now (an attempt record committed them). */
  rowsWritten(rows: readonly UnstoredRow[]): void;
  /**
   * Stores handed-off deliveries before any attempt (handed back, or still in a lane: `lease`;
   * DeliveryStore.storeHandoffs), then counts them as stored. Resolves with their row ids.
   */
  store(rows: readonly UnstoredRow[], now: number, lease?: { claimId: string; leaseUntil: number }): Promise<(number | null)[]>;
  /** Resolves once every finished event is removed from the queue. */
  drain(): Promise<void>;
  /** Events with handed-off deliveries still without rows. */
  readonly open: number;
}

interface Waiting {
  claimId: string;
  leaseUntil: number;
  left: number;
}

export function createEventSettler(store: Pick<DeliveryStore, 'finishEvents' | 'storeHandoffs'>, logger: LaneLogger, clock: () => number): EventSettler {
  const waiting = new Map<number, Waiting>();
  /** Finished events per claim, removed from the queue at the next turn. */
  let finished = new Map<string, number[]>();
  let leaving: Promise<void> | null = null;

  /** The finished events leave the dispatch queue here, a batch per turn of the event loop. */
  async function leaveQueue(): Promise<void> {
    // Let the rest of this turn's records finish their events too.
    await new Promise<void>((r) => setImmediate(r));
    const batch = finished;
    finished = new Map();
    leaving = null;
    for (const [claimId, seqs] of batch) {
      await store.finishEvents(claimId, seqs).catch((err) =>
        logger.error({ err, events: seqs.length }, 'removing delivered events from the dispatch queue failed; they are looked at again when their lease ends'));
    }
  }

  function forgetExpired(now: number): void {
    for (const [seq, w] of waiting) if (w.leaseUntil <= now) waiting.delete(seq);
  }

  function rowsWritten(rows: readonly UnstoredRow[]): void {
    for (const r of rows) {
      const w = waiting.get(r.eventSeq);
      if (w === undefined || --w.left > 0) continue;
      waiting.delete(r.eventSeq);
      let seqs = finished.get(w.claimId);
      if (seqs === undefined) finished.set(w.claimId, (seqs = []));
      seqs.push(r.eventSeq);
      leaving ??= leaveQueue();
    }
  }

  return {
    expect(claimId, handoffs) {
      if (waiting.size > 0) forgetExpired(clock());
      for (const h of handoffs) {
        for (const { eventSeq } of h.deliveries) {
          const w = waiting.get(eventSeq);
          // Every lane's lease ends with its event's; the earliest one bounds the wait.
          if (w === undefined || w.claimId !== claimId) waiting.set(eventSeq, { claimId, leaseUntil: h.leaseUntil, left: 1 });
          else {
            w.left++;
            w.leaseUntil = Math.min(w.leaseUntil, h.leaseUntil);
          }
        }
      }
    },
    rowsWritten,
    async store(rows, now, lease) {
      const ids = await store.storeHandoffs(rows, now, lease);
      rowsWritten(rows);
      return ids;
    },
    async drain() {
      while (leaving !== null) await leaving;
    },
    get open() {
      return waiting.size;
    },
  };
}
