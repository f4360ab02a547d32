// Delivery on its own worker thread (DELIVERY_THREAD=1, the default of `npm start`):
// commits wake it, its metrics show in /metrics, and a thread that dies is replaced and
// carries on with the work.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { startTestServer, waitFor, type TestServer, type TestAccount } from '../helpers/test-server.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { SETTINGS } from './delivery-fixture.ts';

const lead = (id: string) => ({ event: { name: 'lead_created', id }, context: { environment: 'prod', data_source: 'crm', url: 'https://shop.example/' } });

describe('delivery thread', function () {
  this.timeout(30_000);
  let s: TestServer;
  let a: TestAccount;
  let hook: DestinationDouble;
  before(async () => {
    hook = await startDestinationDouble();
    s = await startTestServer({ ALLOW_PRIVATE_DESTINATIONS: '1', DELIVERY_THREAD: '1' });
    a = await s.account();
    await s.running.store.destinations.add({ id: `dst_${randomBytes(8).toString('hex')}`, scriptId: a.scriptId, type: 'webhook', name: 'hook', enabled: true, settings: SETTINGS.webhook(hook.url) });
  });
  after(async () => {
    await s?.close();
    await hook?.close();
  });

  const ids = () => hook.requests.map((r) => r.json().id as string);

  it('runs delivery off the main thread: an accepted event reaches the webhook', async () => {
    expect(s.running.delivery, 'no dispatcher on the main thread').to.equal(null);
    expect(s.running.deliveryThread).to.not.equal(null);
    expect((await s.post(INTAKE_PATHS.event, lead('T-1'), { account: a })).status).to.equal(200);
    await hook.waitFor(() => ids().includes('T-1'), 10_000, 'T-1 delivered');
  });

  it('adds the thread\'s delivery metrics to /metrics', async () => {
    // The double has the request before the thread records the attempt: await the count.
    const counted = /tracklane_delivery_attempts_total\{destination_type="webhook",outcome="success"\} [1-9]/;
    let text = '';
    await waitFor(async () => counted.test((text = await (await fetch(`${s.url}/metrics`)).text())), 5_000);
    expect(text).to.match(counted);
    expect(text).to.contain('tracklane_http_requests_total');
  });

  it('replaces a thread that died, and the new one delivers', async () => {
    const thread = s.running.deliveryThread!;
    expect(thread.starts).to.equal(1);
    thread.crash();
    expect(await waitFor(() => thread.starts === 2, 10_000), 'restarted').to.equal(true);
    expect((await s.post(INTAKE_PATHS.event, lead('T-2'), { account: a })).status).to.equal(200);
    await hook.waitFor(() => ids().includes('T-2'), 15_000, 'T-2 delivered by the new thread');
    expect(ids().filter((id) => id === 'T-1')).to.have.length(1);
  });
});
