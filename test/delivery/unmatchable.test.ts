// Events a platform can never match are kept out of its batches: a LinkedIn checkout with no
// hashed e-mail, li_fat_id or names, and a Microsoft one with nothing but IP and user agent,
// are recorded `skipped` (`unmatchable`, with the plugin's reason) and never reach the double,
// while a matchable event of the same pass is sent alone in its request.
import { expect } from 'chai';
import { checkout, useFixtureWithDouble } from './delivery-fixture.ts';

describe('delivery: never-matchable events are skipped before batching', function () {
  this.timeout(20_000);
  const t = useFixtureWithDouble();

  /** A checkout with no user identifiers and no cookies: only the page, IP and user agent. */
  const anonymous = (id: string) => checkout(id, { user: undefined, cookies: [] });

  for (const [type, path, reason] of [
    ['linkedin', '/rest/conversionEvents', 'linkedin: LinkedIn matches a conversion by a hashed email, the li_fat_id click id or first and last name together; this event has none (userIds would be empty) and cannot be attributed; nothing sent'],
    ['microsoft-ads', '/v1/97247724/events', 'microsoft-ads: Microsoft needs at least one identifier in userData (msclkid, the _uetvid visitor id, a hashed email or phone, or a customer id); this event has none and would be refused; nothing sent'],
  ] as const) {
    it(`${type}: an event without identifiers is skipped with the reason and never sent; the good one goes alone`, async () => {
      const scriptId = await t.f.account();
      const dest = await t.f.destination(scriptId, type, t.dbl.url);
      await t.f.ingest(scriptId, checkout('ORD-GOOD'));
      await t.f.ingest(scriptId, anonymous('ORD-NOBODY'));
      await t.f.dispatcher().runOnce();

      const rows = await t.f.store.deliveries.list({ destinationId: dest.id, limit: 10 });
      const by = (id: string) => rows.find((r) => r.eventId === id);
      expect(by('ORD-GOOD')).to.include({ status: 'delivered' });
      expect(by('ORD-NOBODY')).to.include({ status: 'skipped', skipReason: 'unmatchable', attempts: 0 });
      expect(by('ORD-NOBODY')!.lastError).to.contain(reason);
      expect(t.dbl.requests.map((r) => r.path)).to.deep.equal([path]);
      expect(t.dbl.requests[0].body).to.contain('ORD-GOOD').and.not.contain('ORD-NOBODY');
    });
  }
});
