// When an event leaves the dispatch queue after its fan-out handed deliveries off. Those
// deliveries have no rows until their attempts are recorded (or they are handed back), so the
// event stays queued, leased to the fan-out's claim: should the process stop first, the event
// is fanned out again for the rows it lacks. The settler counts each event's handed-off
// deliveries down as their rows are committed and removes the events whose count reaches
// zero, a batch per turn of the event loop. An event whose count never reaches zero (a record
// that failed) is forgotten once its lease ends; its lease then brings it back to the fan-out.
import type { DeliveryStore, LaneLogger, UnstoredRow } from './types.ts';

export interface EventSettler {
  /** The fan-out under `claimId` (leased until `leaseUntil`) handed off `count` deliveries of each event seq. */
  expect(claimId: string, leaseUntil: number, counts: ReadonlyMap<number, number>): void;
  /** These handed-off deliveries have rows now (recorded, or stored when handed back). */
  stored(rows: readonly UnstoredRow[]): void;
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

export function createEventSettler(store: Pick<DeliveryStore, 'finishEvents'>, logger: LaneLogger, clock: () => number): EventSettler {
  const waiting = new Map<number, Waiting>();
  /** Finished events per claim, removed from the queue at the next turn. */
  let finished = new Map<string, number[]>();
  let flushing: Promise<void> | null = null;

  async function flush(): Promise<void> {
    // Let the rest of this turn's records finish their events too.
    await new Promise<void>((r) => setImmediate(r));
    const batch = finished;
    finished = new Map();
    flushing = null;
    for (const [claimId, seqs] of batch) {
      await store.finishEvents(claimId, seqs).catch((err) =>
        logger.error({ err, events: seqs.length }, 'removing delivered events from the dispatch queue failed; they are looked at again when their lease ends'));
    }
  }

  function forgetExpired(now: number): void {
    for (const [seq, w] of waiting) if (w.leaseUntil <= now) waiting.delete(seq);
  }

  return {
    expect(claimId, leaseUntil, counts) {
      if (waiting.size > 0) forgetExpired(clock());
      for (const [seq, left] of counts) waiting.set(seq, { claimId, leaseUntil, left });
    },
    stored(rows) {
      for (const r of rows) {
        const w = waiting.get(r.eventSeq);
        if (w === undefined || --w.left > 0) continue;
        waiting.delete(r.eventSeq);
        let seqs = finished.get(w.claimId);
        if (seqs === undefined) finished.set(w.claimId, (seqs = []));
        seqs.push(r.eventSeq);
        flushing ??= flush();
      }
    },
    async drain() {
      while (flushing !== null) await flushing;
    },
    get open() {
      return waiting.size;
    },
  };
}
