// Rule previews and replays through a draft run off the HTTP thread, within a time limit:
// /healthz is answered while a costly replay runs, a second replay meanwhile is refused
// (409 CONFLICT), and a run past its limit ends in 503 UNAVAILABLE naming the limit.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { adminCall, auth, TOKEN } from './admin-client.ts';
import { startTestServer, type TestServer, type TestAccount } from '../helpers/test-server.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { checkout, SETTINGS } from '../delivery/delivery-fixture.ts';

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const PRODUCTS = 300;
const EVENTS = 150;
/** ~302 steps per product: ~90,000 per rule on these events, well inside the static bound (100 products assumed). */
const PER_PRODUCT = { some: [{ var: 'products' }, { some: [range(60), { '==': [{ var: '' }, -1] }] }] };
/** A webhook draft that spends ~180,000 evaluation steps on each event and sends a small body. */
const COSTLY_DRAFT = {
  destination: 'webhook',
  rules: [1, 2].map((i) => ({ id: `costly.${i}`, event: '*', when: { '!': PER_PRODUCT }, output: { type: { var: 'event.name' }, [`data.n${i}`]: i } })),
};
const order = (id: string) => checkout(id, {
  event: { name: 'checkout_completed', id, value: PRODUCTS, currency: 'EUR' },
  products: range(PRODUCTS).map((i) => ({ id: `SKU-${i}`, name: `Item ${i}`, price_base: 1, price: 1, quantity: 1, category: 'Kitchen', tax_included: true, tax_percent: 19 })),
});

describe('admin API: rule previews and replays off the HTTP thread', function () {
  this.timeout(60_000);
  let hook: DestinationDouble;
  before(async () => {
    hook = await startDestinationDouble();
  });
  after(() => hook.close());

  async function serverWithEvents(draftTimeLimitMs?: number, events = 1): Promise<{ s: TestServer; shop: TestAccount }> {
    const s = await startTestServer({ ADMIN_TOKEN: TOKEN, ALLOW_PRIVATE_DESTINATIONS: '1' }, { draftTimeLimitMs });
    const shop = await s.account();
    for (const batch of range(Math.ceil(events / 10))) {
      const sent = await Promise.all(range(Math.min(10, events - batch * 10)).map((i) => s.post(INTAKE_PATHS.event, order(`ORD-${batch}-${i}`), { account: shop })));
      for (const r of sent) expect(r.status).to.equal(200);
    }
    for (const name of ['hook-a', 'hook-b', 'hook-c']) {
      await s.running.store.destinations.add({ id: `dst_${randomBytes(8).toString('hex')}`, scriptId: shop.scriptId, type: 'webhook', name, enabled: true, settings: SETTINGS.webhook(hook.url) });
    }
    return { s, shop };
  }

  it('answers /healthz while a costly replay runs, and refuses a second replay meanwhile with 409 CONFLICT', async () => {
    // A limit well above the replay's cost, so a loaded machine does not stop it: this is about what answers meanwhile.
    const { s, shop } = await serverWithEvents(60_000, EVENTS);
    try {
      const call = (body: unknown) => adminCall(s.url, 'POST', '/admin/rules/webhook/replay', body);
      const answered: string[] = [];
      const replay = call({ scope: shop.scriptId, document: COSTLY_DRAFT, last: EVENTS }).then((r) => {
        answered.push('replay');
        return r;
      });
      // Until the first has answered, another replay is refused (never queued behind it).
      let second = await call({ scope: shop.scriptId, document: COSTLY_DRAFT, last: 1 });
      while (second.status !== 409 && answered.length === 0) second = await call({ scope: shop.scriptId, document: COSTLY_DRAFT, last: 1 });
      expect(answered, 'the replay answered before a second one was refused').to.deep.equal([]);
      expect(second.status).to.equal(409);
      expect(second.body.error.code).to.equal('CONFLICT');
      const health = await fetch(`${s.url}/healthz`);
      answered.push('healthz');
      expect(health.status).to.equal(200);
      const r = await replay;
      expect(answered).to.deep.equal(['healthz', 'replay']);
      expect(r.status, JSON.stringify(r.body).slice(0, 300)).to.equal(200);
      expect(r.body).to.include({ considered: EVENTS, events: EVENTS, events_changed: EVENTS, destinations_changed: 3 * EVENTS });
      // Once it has answered, the next replay runs.
      expect((await call({ scope: shop.scriptId, document: COSTLY_DRAFT, last: 1 })).status).to.equal(200);
    } finally {
      await s.close();
    }
  });

  it('answers 429 RATE_LIMITED with Retry-After when one preview runs and 4 wait; the waiting ones run in turn', async () => {
    const { s, shop } = await serverWithEvents(undefined, 1);
    try {
      const [stored] = await s.running.store.events.list({ scriptId: shop.scriptId, limit: 1 });
      const preview = () => fetch(`${s.url}/admin/rules/webhook/preview`, {
        method: 'POST', headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ scope: shop.scriptId, document: COSTLY_DRAFT, event_id: stored.id }),
      });
      // Sent together: the first starts the thread (which takes a while), so 1 runs, 4 wait and the rest are refused.
      const answers = await Promise.all(range(8).map(async () => {
        const r = await preview();
        return { status: r.status, retryAfter: r.headers.get('retry-after'), body: await r.json() as any };
      }));
      const refused = answers.filter((a) => a.status === 429);
      expect(answers.filter((a) => a.status === 200), 'one running and 4 waiting are answered').to.have.length(5);
      expect(refused).to.have.length(3);
      for (const r of refused) {
        expect(r.retryAfter).to.equal('5');
        expect(r.body).to.deep.equal({ error: { code: 'RATE_LIMITED', message: r.body.error.message } });
        expect(r.body.error.message).to.match(/^Too many rule previews are waiting/);
      }
    } finally {
      await s.close();
    }
  });

  it('a preview or a replay past its time limit ends in 503 UNAVAILABLE naming the limit', async () => {
    const { s, shop } = await serverWithEvents(0, 3);
    try {
      const replay = await adminCall(s.url, 'POST', '/admin/rules/webhook/replay', { scope: shop.scriptId, document: COSTLY_DRAFT, last: 3 });
      expect(replay.status).to.equal(503);
      expect(replay.body.error.code).to.equal('UNAVAILABLE');
      expect(replay.body.error.message).to.match(/^The replay through the draft ran past its time limit of 0 s and was stopped after 1 of the last 3 events; replay fewer events/);
      const [stored] = await s.running.store.events.list({ scriptId: shop.scriptId, limit: 1 });
      const preview = await adminCall(s.url, 'POST', '/admin/rules/webhook/preview', { scope: shop.scriptId, document: COSTLY_DRAFT, event_id: stored.id });
      expect(preview.status).to.equal(503);
      expect(preview.body.error.message).to.match(/^The preview ran past its time limit of 0 s and was stopped after 1 of 3 destinations/);
      expect((await fetch(`${s.url}/healthz`)).status).to.equal(200);
    } finally {
      await s.close();
    }
  });
});
