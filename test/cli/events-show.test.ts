// `tracklane events show EVENT_ID`: the stored event, its issues and payload, and every
// delivery it led to, through the real CLI on a dispatcher's database; and `deliveries show`
// of one delivered without a row, by its derived id.
import { expect } from 'chai';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { checkout, createFixture, fixtureCli, type Fixture } from '../delivery/delivery-fixture.ts';
import { waitFor } from '../helpers/test-server.ts';
import type { DeliveryView } from '../../src/store/delivery-contract.ts';

describe('cli: events show', function () {
  this.timeout(30_000);
  let f: Fixture;
  let dbl: DestinationDouble;
  let a: string;
  let b: string;
  const cli = fixtureCli(() => f);

  before(async () => {
    f = await createFixture();
    dbl = await startDestinationDouble();
    a = await f.account();
    b = await f.account();
    await f.destination(a, 'ga4', dbl.url);
    await f.destination(a, 'meta-capi', dbl.url);
    await f.ingest(a, checkout('ORD-SHOW'));
    await f.ingest(a, checkout('ORD-TWICE'));
    await f.ingest(b, checkout('ORD-TWICE'));
    await f.dispatcher().runOnce();
  });
  after(async () => {
    await f.close();
    await dbl.close();
  });

  it('--json: the event with its payload and one delivery per destination', async () => {
    const r = await cli('events', 'show', 'ORD-SHOW', '--json');
    expect(r.code, r.stderr).to.equal(0);
    const shown = JSON.parse(r.stdout);
    expect(shown).to.include({ event_id: 'ORD-SHOW', script_id: a });
    expect(shown.events).to.have.length(1);
    expect(shown.events[0]).to.include({ status: 'accepted', name: 'checkout_completed', event_id: 'ORD-SHOW' });
    expect(shown.events[0].payload.user).to.include({ email: 'buyer-ORD-SHOW@example.com' });
    expect(shown.deliveries.map((d: any) => [d.destination_type, d.status]).sort()).to.deep.equal([['ga4', 'delivered'], ['meta-capi', 'delivered']]);
  });

  it('deliveries show ID: a delivery delivered without a row, by the id derived from its attempt', async () => {
    // A running dispatcher hands the delivery straight to its lane: delivered by its first attempt, no row.
    const c = await f.account();
    await f.destination(c, 'webhook', dbl.url);
    const running = f.dispatcher({ clock: Date.now });
    await running.start();
    await f.ingest(c, checkout('ORD-LANE'));
    let d: DeliveryView | undefined;
    await waitFor(async () => ([d] = await f.store.deliveries.list({ scriptId: c, status: 'delivered' })).length === 1, 10_000);
    await running.stop(1_000);
    expect(d!.id, 'derived from its attempt').to.be.above(2 ** 52);
    const r = await cli('deliveries', 'show', String(d!.id), '--json');
    expect(r.code, r.stderr).to.equal(0);
    const shown = JSON.parse(r.stdout);
    expect(shown).to.include({ id: d!.id, status: 'delivered', event_id: 'ORD-LANE', attempts: 1 });
    expect(shown.attempts_log.map((x: any) => x.status_code)).to.deep.equal([200]);
  });

  it('human output: fields, payload and a deliveries table', async () => {
    const r = await cli('events', 'show', 'ORD-SHOW');
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.contain('status').and.contain('accepted');
    expect(r.stdout).to.contain('Payload:').and.contain('"name": "checkout_completed"');
    expect(r.stdout).to.match(/Deliveries:\n.*DESTINATION/);
  });

  it('an id received for several accounts asks for --account; an unknown id says so', async () => {
    const both = await cli('events', 'show', 'ORD-TWICE');
    expect(both.code).to.equal(1);
    expect(both.stderr).to.contain('was received for 2 accounts').and.contain('add --account ID');
    const one = await cli('events', 'show', 'ORD-TWICE', '--account', b, '--json');
    expect(JSON.parse(one.stdout).script_id).to.equal(b);
    const none = await cli('events', 'show', 'NOPE-1');
    expect(none.code).to.equal(1);
    expect(none.stderr).to.contain('no event with id "NOPE-1"');
  });

  it('by tracklane\'s own row id: found however many events came after it (looked up by id, not among the newest 10,000)', async () => {
    const c = await f.account();
    const rowId = await f.ingest(c, checkout('ORD-BY-ROW'));
    await f.store.events.append(Array.from({ length: 10_001 }, (_, i) => ({
      id: `later-${i}`, scriptId: c, name: null, eventId: null, status: 'rejected' as const, source: 'event', requestId: `r-${i}`,
      receivedAt: f.clock(), errors: [], warnings: [], payload: null,
    })));
    for (const account of [[], ['--account', c]]) {
      const r = await cli('events', 'show', rowId, ...account, '--json');
      expect(r.code, r.stderr).to.equal(0);
      const shown = JSON.parse(r.stdout);
      expect(shown).to.include({ event_id: 'ORD-BY-ROW', script_id: c });
      expect(shown.events.map((e: any) => e.id)).to.deep.equal([rowId]);
    }
  });
});
