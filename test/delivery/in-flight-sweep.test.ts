// The in-flight sweep (src/delivery/lane-in-flight.ts) stores what a lane has held without a
// row for a sweep or more. A lane of one-event requests holds many units under one claim: they
// are stored in one call (one transaction), not one each; and a delivery the lane sent while
// an earlier store was under way is left to its attempt's record.
import { expect } from 'chai';
import { createLaneInFlight } from '../../src/delivery/lane-in-flight.ts';
import { createLaneState, type LaneDeps, type LaneState, type Unit } from '../../src/delivery/lane-state.ts';
import type { ActiveDestination, ClaimedDelivery, UnstoredRow } from '../../src/store/delivery-contract.ts';

const dest: ActiveDestination = {
  id: 'd1', scriptId: 's1', type: 'webhook', name: 'hook', enabled: true, settings: {}, createdAt: 0, updatedAt: 0, pausedAt: null, pausedDestinationUpdatedAt: null,
};

let key = 0;
function unit(claimId: string, leaseUntil: number, seq: number): Unit {
  const row = { eventSeq: seq, scriptId: 's1', destinationId: 'd1', destinationType: 'webhook', eventId: null, receivedAt: 0, part: 0, item: {} } as unknown as UnstoredRow;
  const d = { id: --key, eventSeq: seq, scriptId: 's1', destinationId: 'd1', destinationType: 'webhook', eventId: null, attempts: 0, receivedAt: 0,
    part: 0, item: {}, unstored: row } as unknown as ClaimedDelivery;
  return { request: {} as Unit['request'], deliveries: [d], claimId, leaseUntil };
}

function sweeper(s: LaneState, onStore: (rows: readonly UnstoredRow[]) => Promise<void> = async () => undefined) {
  const calls: { claimId: string; seqs: number[] }[] = [];
  const deps = {
    clock: () => 1_000,
    logger: { error: () => undefined, warn: () => undefined, info: () => undefined, debug: () => undefined },
    settler: {
      async store(rows: readonly UnstoredRow[], _now: number, lease?: { claimId: string }) {
        calls.push({ claimId: lease!.claimId, seqs: rows.map((r) => r.eventSeq) });
        await onStore(rows);
        return rows.map((_, i) => 100 + i);
      },
    },
  } as unknown as LaneDeps;
  return { inFlight: createLaneInFlight(deps, s, {}), calls };
}

describe('delivery: the in-flight sweep', () => {
  it('stores the units of one claim in one call', async () => {
    const s = createLaneState(dest, undefined);
    s.queue.push(unit('c#1', 5_000, 1), unit('c#1', 5_000, 2), unit('c#1', 5_000, 3));
    const { inFlight, calls } = sweeper(s);
    await inFlight.sweep(); // first sight
    await inFlight.sweep(); // still there a sweep later: stored
    expect(calls).to.deep.equal([{ claimId: 'c#1', seqs: [1, 2, 3] }]);
    await inFlight.sweep();
    expect(calls, 'stored once').to.have.length(1);
  });

  it('leaves to its record a delivery the lane sent while an earlier store was under way', async () => {
    const s = createLaneState(dest, undefined);
    const later = unit('c#2', 6_000, 2);
    s.queue.push(unit('c#1', 5_000, 1), later);
    // While the first claim's deliveries are stored, the lane sends the other unit (it leaves the queue).
    const { inFlight, calls } = sweeper(s, async () => {
      s.queue.splice(s.queue.indexOf(later), 1);
    });
    await inFlight.sweep();
    await inFlight.sweep();
    expect(calls).to.deep.equal([{ claimId: 'c#1', seqs: [1] }]);
  });
});
