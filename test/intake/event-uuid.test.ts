// An event row's id is a version 7 UUID (src/intake/event-uuid.ts): events received one after
// another get ids in that order, so the events.id index grows at its right edge.
import { expect } from 'chai';
import { eventRow, type AcceptInput } from '../../src/intake/accept-events.ts';
import { eventUuid } from '../../src/intake/event-uuid.ts';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('intake: event row ids', () => {
  it('are version 7 UUIDs in the order the events were received, the time in their first 48 bits', () => {
    const input = { account: { scriptId: 'ACCT0001' }, requestId: 'r', source: 'event' } as unknown as AcceptInput;
    const t0 = 1_800_000_000_000;
    const ids = [0, 1, 1, 2, 250, 86_400_000].map((dt) => eventRow(input, { event: { name: 'purchase' } }, { errors: [], warnings: [] }, t0 + dt).id);
    for (const id of ids) expect(id).to.match(V7);
    expect(new Set(ids).size, 'distinct').to.equal(ids.length);
    // Same millisecond: random after the time, so only ids of different milliseconds are ordered.
    const distinctMs = [ids[0], ids[1], ids[3], ids[4], ids[5]];
    expect([...distinctMs].sort()).to.deep.equal(distinctMs);
    expect(parseInt(eventUuid(t0).replace(/-/g, '').slice(0, 12), 16)).to.equal(t0);
  });
});
