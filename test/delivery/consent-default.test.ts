// An account's consent default: an event without a consent object is all granted unless the
// account says `denied`; then marketing and analytics destinations skip it for consent, and a
// destination without a consent category (the webhook) still gets it.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { createAccountService } from '../../src/accounts/account-service.ts';
import { validateFor } from '../../src/intake/accept-events.ts';
import type { DestinationDouble } from '../helpers/destination-double.ts';
import { STORE_KINDS, STORE_LABEL, storeHarness } from '../helpers/stores.ts';
import { checkout, useFixtureWithDouble, type Fixture } from './delivery-fixture.ts';

const noCounters = { validationFailures: { inc() {} } };

for (const kind of STORE_KINDS) describe(`delivery (${STORE_LABEL[kind]}): an account's consent default`, function () {
  const harness = storeHarness(kind);
  this.timeout(20_000);
  const t = useFixtureWithDouble({ open: () => harness.open() });
  let f: Fixture;
  let dbl: DestinationDouble;
  beforeEach(() => {
    ({ f, dbl } = t);
  });

  /** Validates for the stored account, as intake does, and stores the accepted event. */
  async function ingest(scriptId: string, payload: Record<string, unknown>): Promise<void> {
    const account = (await f.store.accounts.get(scriptId))!;
    const r = validateFor(account, payload, noCounters);
    if (!r.event) throw new Error(`invalid test event: ${JSON.stringify(r.errors)}`);
    await f.store.events.append([{
      id: randomUUID(), scriptId, name: 'checkout_completed', eventId: (payload.event as { id: string }).id, status: 'accepted', source: 'event',
      requestId: randomUUID(), receivedAt: f.clock(), errors: [], warnings: r.warnings, payload: r.event,
    }]);
  }

  /** Three destinations on one account, one event without consent, fanned out; the rows by type. */
  async function deliverWithoutConsent(consentDefault: 'granted' | 'denied' | null) {
    const scriptId = await f.account();
    if (consentDefault !== null) await createAccountService(f.store).update(scriptId, { consentDefault });
    for (const type of ['ga4', 'meta-capi', 'webhook']) await f.destination(scriptId, type, dbl.url);
    const { consent: _consent, ...payload } = checkout('NO-CONSENT');
    await ingest(scriptId, payload);
    await f.dispatcher().runOnce();
    const rows = await f.store.deliveries.list({ scriptId, limit: 10 });
    return Object.fromEntries(rows.map((r) => [r.destinationType, r]));
  }

  it('denied: GA4 (analytics) and Meta (marketing) skip the event for consent; the webhook still gets it', async () => {
    const rows = await deliverWithoutConsent('denied');
    expect(rows.ga4).to.include({ status: 'skipped', skipReason: 'consent' });
    expect(rows.ga4.lastError).to.match(/consent\.analytics is false/);
    expect(rows['meta-capi']).to.include({ status: 'skipped', skipReason: 'consent' });
    expect(rows['meta-capi'].lastError).to.match(/consent\.marketing is false/);
    expect(rows.webhook).to.include({ status: 'delivered' });
    expect(dbl.requests).to.have.length(1);
  });

  it('by default, and set back to granted, an event without consent goes to every destination', async () => {
    for (const rows of [await deliverWithoutConsent(null), await deliverWithoutConsent('granted')]) {
      expect(Object.values(rows).map((r) => [r.destinationType, r.status]).sort()).to.deep.equal([
        ['ga4', 'delivered'], ['meta-capi', 'delivered'], ['webhook', 'delivered'],
      ]);
    }
  });

  it('an explicit consent is kept whatever the default', async () => {
    const scriptId = await f.account();
    await createAccountService(f.store).update(scriptId, { consentDefault: 'denied' });
    await f.destination(scriptId, 'meta-capi', dbl.url);
    await ingest(scriptId, checkout('GIVEN'));
    await f.dispatcher().runOnce();
    const [row] = await f.store.deliveries.list({ scriptId, limit: 10 });
    expect(row).to.include({ status: 'delivered' });
  });
});
