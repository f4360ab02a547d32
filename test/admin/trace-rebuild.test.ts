// A trace rebuilds the body a successful attempt sent (the attempt keeps only its digest) by
// mapping the event again: the rebuild must give the same bytes. A Meta event with `fbclid` in
// its URL carries an `fbc` built from it, whose creation time is the event's own (when
// tracklane received it), not the time it was mapped: mapped at fan-out and again when the
// trace opens, it is the same, so the trace says the body shown is the one sent.
import { expect } from 'chai';
import { createHash, randomBytes } from 'node:crypto';
import { auth, TOKEN } from './admin-client.ts';
import { startTestServer, waitFor, type TestServer } from '../helpers/test-server.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { SETTINGS } from '../delivery/delivery-fixture.ts';

const FBCLID = 'IwAR2Fbclid_Test-123';

describe('trace: a rebuilt body is the one sent', () => {
  let s: TestServer;
  let meta: DestinationDouble;

  before(async () => {
    s = await startTestServer({ ADMIN_TOKEN: TOKEN, ALLOW_PRIVATE_DESTINATIONS: '1' });
    meta = await startDestinationDouble();
    meta.otherwise(() => ({ status: 200, body: { events_received: 1, messages: [], fbtrace_id: 'AbC1' } }));
  });
  after(async () => {
    await s.close();
    await meta.close();
  });

  it('a Meta event with fbclid: the trace maps it again to the bytes sent (digest equal), fbc with the event\'s time', async () => {
    const shop = await s.account();
    await s.running.store.destinations.add({
      id: `dst_${randomBytes(8).toString('hex')}`, scriptId: shop.scriptId, type: 'meta-capi', name: 'meta', enabled: true, settings: SETTINGS['meta-capi'](meta.url),
    });
    const event = {
      event: { name: 'lead_created', id: 'FB-1' },
      context: {
        environment: 'prod', data_source: 'website', url: `https://shop.example/contact?fbclid=${FBCLID}`,
        user_agent: 'Mozilla/5.0 test', overide_ip: '203.0.113.9',
      },
      user: { email: 'buyer@example.com' },
      consent: { analytics: true, personalization: true, marketing: true },
    };
    expect((await s.post(INTAKE_PATHS.event, event, { account: shop })).status).to.equal(200);
    await meta.waitFor(() => meta.requests.length === 1, 10_000, 'the Meta event sent');
    const sent = meta.requests[0];
    const fbc: string = sent.json<{ data: { user_data: { fbc: string } }[] }>().data[0].user_data.fbc;
    expect(fbc).to.match(new RegExp(`^fb\\.1\\.\\d+\\.${FBCLID}$`));

    const [row] = (await (await fetch(`${s.url}/admin/events?script_id=${shop.scriptId}`, { headers: auth })).json() as { items: { id: string; received_at: number }[] }).items;
    let detail: any;
    expect(await waitFor(async () => {
      detail = await (await fetch(`${s.url}/admin/events/${row.id}`, { headers: auth })).json();
      return detail.deliveries[0]?.status === 'delivered';
    }, 5_000)).to.equal(true);
    const [request] = detail.deliveries[0].request;
    expect(request.body_sha256, 'the digest the attempt kept').to.equal(createHash('sha256').update(sent.body).digest('hex'));
    expect(request.body_source, 'the rebuilt body is what was sent').to.equal('rebuilt');
    expect(request.body.data[0].user_data.fbc).to.equal(fbc);
    // fbc's creation time is when the event was received.
    expect(fbc).to.equal(`fb.1.${row.received_at}.${FBCLID}`);
  });
});
