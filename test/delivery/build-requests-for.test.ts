// Pairing rebuilt requests with the deliveries they carry: repeated event ids, batches by
// maxEvents, items a plugin leaves out, a plugin that throws, an event no longer stored.
import { expect } from 'chai';
import { buildRequestsFor } from '../../src/delivery/build-requests-for.ts';
import type { ClaimedDelivery } from '../../src/delivery/types.ts';
import type { DestinationPlugin, OutgoingItem } from '../../src/destinations/types.ts';

const delivery = (id: number, eventId: string | null): ClaimedDelivery => ({
  id, eventSeq: id, scriptId: 'S', destinationId: 'D', destinationType: 't', eventId, attempts: 0, receivedAt: 0,
  item: eventId === null ? null : ({ eventId, event: { event: { name: 'lead_created' } }, native: { ruleId: 'r', fields: { n: id } } } as unknown as OutgoingItem),
});

function plugin(maxEvents: number, over: Partial<DestinationPlugin> = {}): DestinationPlugin {
  return {
    name: 't', version: '1.0.0', category: 'analytics', consent: 'analytics', description: 't', settingsSchema: {}, secretSettings: [], identifiers: null,
    batch: { maxEvents },
    // One request per item whose native field n is odd; even ones are batched together.
    buildRequests: ({ items, now }) => {
      const odd = items.filter((i) => Number(i.native.fields.n) % 2 === 1);
      const even = items.filter((i) => Number(i.native.fields.n) % 2 === 0);
      return [...odd.map((i) => [i]), ...(even.length ? [even] : [])].map((group) => ({
        method: 'POST' as const, url: 'http://x', headers: {}, body: JSON.stringify({ now, n: group.map((i) => i.native.fields.n) }),
        eventIds: group.map((i) => i.eventId),
      }));
    },
    classifyResponse: () => ({ outcome: 'success' }),
    ...over,
  };
}

describe('delivery: pairing requests with deliveries', () => {
  it('hands repeated event ids out in order and batches by maxEvents', () => {
    const claimed = [delivery(1, 'A'), delivery(2, 'A'), delivery(3, 'B'), delivery(4, 'B'), delivery(6, 'C')];
    const { units, unsendable } = buildRequestsFor(plugin(3), 't', {}, claimed, 42);
    expect(unsendable).to.deep.equal([]);
    expect(units.map((u) => [JSON.parse(u.request.body).n, u.deliveries.map((d) => d.id)])).to.deep.equal([
      [[1], [1]], [[3], [3]], [[2], [2]], // first chunk: 1, 2, 3
      [[4, 6], [4, 6]], // second chunk: 4, 6
    ]);
    expect(JSON.parse(units[0].request.body).now).to.equal(42);
  });

  it('returns what cannot be sent, with the reason', () => {
    const dropping = plugin(10, { buildRequests: ({ items }) => [{ method: 'POST', url: 'http://x', headers: {}, body: '{}', eventIds: [items[0].eventId] }] });
    const r1 = buildRequestsFor(dropping, 't', {}, [delivery(1, 'A'), delivery(2, 'B'), delivery(3, null)], 0);
    expect(r1.units.map((u) => u.deliveries.map((d) => d.id))).to.deep.equal([[1]]);
    expect(r1.unsendable.map((u) => [u.deliveries.map((d) => d.id), u.message])).to.deep.equal([
      [[3], 'nothing to send: the event is no longer stored, or its rules no longer map it'],
      [[2], 't: the plugin built no request for this event'],
    ]);
    const throwing = plugin(10, { buildRequests: () => { throw new Error('no pixel'); } });
    const r2 = buildRequestsFor(throwing, 't', {}, [delivery(1, 'A')], 0);
    expect(r2.units).to.deep.equal([]);
    expect(r2.unsendable[0].message).to.equal('t: building the request failed: no pixel');
  });

  it('gives each item tracklane\'s message id: per event and destination, stable, never customer text', () => {
    const seen: string[] = [];
    const recording = plugin(10, { buildRequests: ({ items }) => items.map((i) => {
      seen.push(i.messageId);
      return { method: 'POST' as const, url: 'http://x', headers: { 'x-id': i.messageId }, body: '{}', eventIds: [i.eventId] };
    }) });
    buildRequestsFor(recording, 't', {}, [delivery(1, '订单-1'), delivery(2, 'B')], 0);
    buildRequestsFor(recording, 't', {}, [delivery(1, '订单-1')], 99);
    expect(seen[0]).to.match(/^msg_[0-9a-f]{32}$/);
    expect(seen[0]).to.not.equal(seen[1]);
    expect(seen[2], 'the same on a retry').to.equal(seen[0]);
    const other = { ...delivery(1, '订单-1'), destinationId: 'D2' };
    buildRequestsFor(recording, 't', {}, [other], 0);
    expect(seen[3], 'another destination, another id').to.not.equal(seen[0]);
  });

  it('fails (never sends, never retries) a request whose header HTTP would refuse', () => {
    const leaky = plugin(10, { buildRequests: ({ items }) => items.map((i) => ({
      method: 'POST' as const, url: 'http://x', headers: { 'x-order': i.eventId }, body: '{}', eventIds: [i.eventId],
    })) });
    const r = buildRequestsFor(leaky, 't', {}, [delivery(1, '订单-1'), delivery(2, 'OK-2'), delivery(3, 'a\r\nb')], 0);
    expect(r.units.map((u) => u.deliveries.map((d) => d.id))).to.deep.equal([[2]]);
    expect(r.unsendable.map((u) => [u.deliveries.map((d) => d.id), u.message])).to.deep.equal([
      [[1], 't: header x-order holds characters HTTP does not allow; not sent'],
      [[3], 't: header x-order holds characters HTTP does not allow; not sent'],
    ]);
  });
});
