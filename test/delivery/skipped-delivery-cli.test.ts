// A skipped delivery keeps why it was skipped: the rule's warnings (GA4: no client id to send)
// are stored with it and shown by `deliveries show`, in text and JSON, through the real CLI.
import { expect } from 'chai';
import { fixtureCli, useFixtureWithDouble } from './delivery-fixture.ts';

describe('delivery: a skipped delivery says why', function () {
  this.timeout(30_000);
  const t = useFixtureWithDouble();
  const cli = fixtureCli(() => t.f);

  it('GA4 without a _ga cookie or user: deliveries show names the missing client id', async () => {
    const scriptId = await t.f.account();
    await t.f.destination(scriptId, 'ga4', t.dbl.url);
    await t.f.ingest(scriptId, { event: { name: 'lead_created', id: 'LEAD-NO-CID' }, context: { environment: 'prod', data_source: 'crm' } });
    await t.f.dispatcher().runOnce();
    const [row] = await t.f.store.deliveries.list({ scriptId, limit: 1 });
    expect(row).to.include({ status: 'skipped', skipReason: 'condition_not_met' });

    const json = await cli('deliveries', 'show', String(row.id), '--json');
    expect(json.code, json.stderr).to.equal(0);
    const shown = JSON.parse(json.stdout) as { skip_reason: string; last_error: string };
    expect(shown.skip_reason).to.equal('condition_not_met');
    expect(shown.last_error).to.match(/see warnings.*Warnings: ga4: no _ga cookie and no user id, email or phone: no client_id to send/);

    const text = await cli('deliveries', 'show', String(row.id));
    expect(text.code, text.stderr).to.equal(0);
    expect(text.stdout).to.include('no client_id to send');
    expect(t.dbl.requests).to.have.length(0);
  });
});
