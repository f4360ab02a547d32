// The admin API (/admin/*): the token gate, event listings with filters and pages, the live
// stream, one event traced to the double's received request, destination health with
// resume, delivery replay, and the custom endpoints' test-mode run.
import { expect } from 'chai';
import { adminCall, auth, lead, TOKEN } from './admin-client.ts';
import { createHash, randomBytes } from 'node:crypto';
import { startTestServer, waitFor, type TestServer, type TestAccount } from '../helpers/test-server.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { SETTINGS } from '../delivery/delivery-fixture.ts';
import { withAdminPaths } from '../../src/admin/admin-openapi.ts';
import { buildOpenApi } from '../../src/http/openapi.ts';
import { adminRouter } from '../../src/admin/admin-routes.ts';
import { rulesAdminRouter } from '../../src/admin/rules-routes.ts';
import { manageRouter } from '../../src/admin/manage-routes.ts';



/** A GET with the admin token (or `headers`): the status and parsed JSON body. */
async function getJson(base: string, path: string, headers: Record<string, string> = auth): Promise<{ status: number; body: any }> {
  const r = await fetch(`${base}${path}`, { headers });
  return { status: r.status, body: (await r.json()) as any };
}

describe('admin API', () => {
  let s: TestApp;
  let shop: TestAccount;
  const get = (path: string, headers?: Record<string, string>) => getJson(s.url, path, headers);

  before(async () => {
    s = await startTestApp({ ADMIN_TOKEN: TOKEN });
    shop = await s.account();
  });
  after(() => s.close());

  it('refuses a missing or wrong token with 401 in the plain error shape', async () => {
    const none = await get('/admin/events', {});
    expect(none.status).to.equal(401);
    expect(none.body.error.code).to.equal('AUTH_MISSING');
    const wrong = await get('/admin/events', { authorization: 'Bearer not-the-admin-token-at-all' });
    expect(wrong.status).to.equal(401);
    expect(wrong.body.error.code).to.equal('INVALID_CREDENTIALS');
  });

  it('lists events newest first, filtered, in pages', async () => {
    const acc = await s.account();
    for (const id of ['P-1', 'P-2', 'P-3']) expect((await s.post(INTAKE_PATHS.event, lead(id), { account: acc })).status).to.equal(200);
    await s.post(INTAKE_PATHS.event, { event: { name: 'checkout_completed' }, context: { environment: 'prod', data_source: 'website' } }, { account: acc });
    const first = await get(`/admin/events?script_id=${acc.scriptId}&limit=2`);
    expect(first.status).to.equal(200);
    expect(first.body.items.map((e: any) => e.event_id)).to.deep.equal([null, 'P-3']);
    expect(first.body.items[0]).to.include({ status: 'rejected', name: 'checkout_completed' });
    const second = await get(`/admin/events?script_id=${acc.scriptId}&limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body.items.map((e: any) => e.event_id)).to.deep.equal(['P-2', 'P-1']);
    expect(second.body.next_cursor).to.equal(null);
    const accepted = await get(`/admin/events?script_id=${acc.scriptId}&status=accepted&name=lead_created`);
    expect(accepted.body.items).to.have.length(3);
    const bad = await get('/admin/events?status=lost');
    expect(bad.status).to.equal(400);
  });

  it('streams accepted and rejected events as Server-Sent Events, filtered by account', async () => {
    const other = await s.account();
    const ctrl = new AbortController();
    const res = await fetch(`${s.url}/admin/stream?script_id=${shop.scriptId}`, { headers: auth, signal: ctrl.signal });
    expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
    const reader = res.body!.getReader();
    let text = '';
    const read = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        text += new TextDecoder().decode(value);
      }
    })().catch(() => undefined);
    await waitFor(() => text.includes(': connected'), 5_000);
    await s.post(INTAKE_PATHS.event, lead('S-OTHER'), { account: other });
    await s.post(INTAKE_PATHS.event, lead('S-1'), { account: shop });
    await s.post(INTAKE_PATHS.event, lead('S-1'), { account: shop });
    expect(await waitFor(() => (text.match(/event: intake/g) ?? []).length >= 2, 5_000)).to.equal(true);
    const messages = text.split('\n\n').filter((b) => b.startsWith('event: intake')).map((b) => JSON.parse(b.split('data: ')[1]));
    expect(messages.map((m) => [m.event_id, m.status])).to.deep.equal([['S-1', 'accepted'], ['S-1', 'duplicate']]);
    expect(messages[0].acked_at).to.be.at.least(messages[0].received_at);
    ctrl.abort();
    await read;
  });

  it('caps every list at 500 per page: a larger limit is 400 OUT_OF_RANGE', async () => {
    for (const path of ['/admin/events', '/admin/deliveries', '/admin/rules/webhook/history']) {
      const r = await get(`${path}?limit=999999999`);
      expect(r.status, path).to.equal(400);
      expect(r.body.error.code, path).to.equal('OUT_OF_RANGE');
      expect((await get(`${path}?limit=500`)).status, path).to.equal(200);
    }
  });

  it('overview and accounts hold no secrets', async () => {
    const o = await get('/admin/overview');
    expect(o.body.accounts).to.be.at.least(1);
    expect(o.body.rules.valid).to.equal(true);
    const a = await get('/admin/accounts');
    expect(a.body.items.map((x: any) => x.script_id)).to.include(shop.scriptId);
    expect(JSON.stringify(a.body)).not.to.contain(shop.token);
  });
});

describe('admin API: traces, deliveries and destination health', () => {
  let s: TestServer;
  let shop: TestAccount;
  let hook: DestinationDouble;
  let destId: string;
  const get = (path: string, headers?: Record<string, string>) => getJson(s.url, path, headers);
  const post = (path: string, body?: unknown) => adminCall(s.url, 'POST', path, body);

  before(async () => {
    // A full server: these follow events through delivery to a webhook double.
    s = await startTestServer({ ADMIN_TOKEN: TOKEN, ALLOW_PRIVATE_DESTINATIONS: '1' });
    shop = await s.account();
    hook = await startDestinationDouble();
    destId = `dst_${randomBytes(8).toString('hex')}`;
    await s.running.store.destinations.add({ id: destId, scriptId: shop.scriptId, type: 'webhook', name: 'hook', enabled: true, settings: SETTINGS.webhook(hook.url) });
  });
  after(async () => {
    await s.close();
    await hook.close();
  });

  it('traces an event to the request the double received, secrets masked, with the attempt', async () => {
    expect((await s.post(INTAKE_PATHS.event, lead('T-1'), { account: shop })).status).to.equal(200);
    await hook.waitFor(() => hook.requests.some((r) => r.json().id === 'T-1'), 10_000, 'T-1 delivered');
    const hits = await get('/admin/trace?q=T-1');
    expect(hits.body.items).to.have.length(1);
    const id = hits.body.items[0].id;
    expect((await get(`/admin/trace?q=${id}`)).body.items[0].id).to.equal(id);
    let detail: any;
    await waitFor(async () => {
      detail = (await get(`/admin/events/${id}`)).body;
      return detail.deliveries[0]?.status === 'delivered';
    }, 5_000);
    expect(detail.event.payload.event.id).to.equal('T-1');
    const [d] = detail.deliveries;
    expect(d).to.include({ destination_id: destId, destination_type: 'webhook', destination_name: 'hook', status: 'delivered' });
    expect(d.attempt_log).to.have.length(1);
    expect(d.attempt_log[0]).to.include({ attempt: 1, status_code: 200, outcome: 'success' });
    const sent = hook.requests.find((r) => r.json().id === 'T-1')!;
    expect(d.request[0].url).to.equal(`${hook.url}${sent.path}`);
    expect(d.request[0].body).to.deep.equal(sent.json());
    expect(d.request[0].headers['webhook-signature']).to.equal('****');
    // The request as the attempt sent it, not rebuilt now: its own timestamp, the body's digest and size.
    expect(d.request_source).to.equal('sent');
    expect(d.request[0].headers['webhook-timestamp']).to.equal(sent.headers['webhook-timestamp']);
    expect(d.request[0]).to.include({ body_bytes: Buffer.byteLength(sent.body), body_sha256: createHash('sha256').update(sent.body).digest('hex'), body_truncated: false });
    // A successful attempt keeps the body's digest, not its text: the trace maps the event again and the digests agree.
    expect(d.request[0].body_source).to.equal('rebuilt');
    expect(d.attempt_log[0].request).to.deep.include({ body: null, body_source: 'digest_only', body_sha256: d.request[0].body_sha256 });
    const [stored] = await s.running.store.deliveries.attempts(d.id);
    expect(stored.request).to.include({ body: null, bodySha256: d.request[0].body_sha256 });
    expect(JSON.stringify(detail)).not.to.contain(SETTINGS.webhook(hook.url).secret);
    expect((await get('/admin/events/nope')).status).to.equal(404);
  });

  it('traces an event without event.id, and keeps two events with the same id apart', async () => {
    const cart = { event: { name: 'cart_viewed', value: 5, currency: 'EUR' }, context: { environment: 'prod', data_source: 'website', url: 'https://shop.example/cart' }, consent: { analytics: true, personalization: true, marketing: true }, products: [{ id: 'SKU-1', name: 'Mug', price_base: 5, price: 5, quantity: 1, tax_percent: 19, category: 'Kitchen' }] };
    expect((await s.post(INTAKE_PATHS.event, cart, { account: shop })).status).to.equal(200);
    await hook.waitFor(() => hook.requests.some((r) => r.json().type === 'cart_viewed'), 10_000, 'the cart view delivered');
    const [ev] = (await get(`/admin/events?script_id=${shop.scriptId}&name=cart_viewed`)).body.items;
    expect(ev.event_id).to.equal(null);
    let detail: any;
    expect(await waitFor(async () => (detail = (await get(`/admin/events/${ev.id}`)).body).deliveries[0]?.status === 'delivered', 5_000)).to.equal(true);
    expect(detail.deliveries).to.have.length(1);
    // The same event.id again later (a cancellation of the order): each event shows only its own deliveries.
    await s.post(INTAKE_PATHS.event, { ...lead('T-1'), event: { name: 'lead_qualified', id: 'T-1' } }, { account: shop });
    await hook.waitFor(() => hook.requests.filter((r) => r.json().id === 'T-1').length === 2, 10_000, 'the second T-1 delivered');
    const both = (await get('/admin/trace?q=T-1')).body.items;
    expect(both).to.have.length(2);
    // Received by the double is not yet recorded: wait for each record, then exactly one each.
    for (const e of both) {
      let shown: any[] = [];
      await waitFor(async () => (shown = (await get(`/admin/events/${e.id}`)).body.deliveries).length > 0, 5_000);
      expect(shown).to.have.length(1);
    }
  });

  it('replays a failed delivery; a delivered one only with force', async () => {
    // A redirect fails the delivery at once (the webhook plugin retries other non-2xx answers).
    hook.otherwise({ status: 301, body: { error: 'moved' } });
    await s.post(INTAKE_PATHS.event, lead('R-1'), { account: shop });
    let d: any;
    expect(await waitFor(async () => {
      const ev = (await get('/admin/trace?q=R-1')).body.items[0];
      if (!ev) return false;
      d = (await get(`/admin/events/${ev.id}`)).body.deliveries[0];
      return d?.status === 'failed';
    }, 10_000), 'R-1 failed').to.equal(true);
    expect(d.attempt_log[0]).to.include({ status_code: 301 });
    hook.otherwise({ status: 200 });
    const replay = await post(`/admin/deliveries/${d.id}/replay`);
    expect(replay.status, JSON.stringify(replay.body)).to.equal(200);
    expect(replay.body).to.deep.equal({ replayed: 1 });
    await hook.waitFor(() => hook.requests.filter((r) => r.json().id === 'R-1').length === 2, 10_000, 'R-1 sent again');
    await waitFor(async () => (await s.running.store.deliveries.list({ id: d.id }))[0].status === 'delivered', 5_000);
    const refused = await post(`/admin/deliveries/${d.id}/replay`, { force: false });
    expect(refused.status).to.equal(409);
    expect(refused.body.error.code).to.equal('CONFLICT');
    expect((await post(`/admin/deliveries/${d.id}/replay`, { force: true })).body).to.deep.equal({ replayed: 1 });
    expect((await post('/admin/deliveries/999999/replay')).status).to.equal(404);
  });

  it('shows destination health with counts, and resumes a destination', async () => {
    const list = await get(`/admin/destinations?script_id=${shop.scriptId}`);
    const mine = list.body.items.find((x: any) => x.id === destId);
    expect(mine).to.include({ type: 'webhook', name: 'hook', enabled: true, lagging: false, overdue_seconds: 0 });
    expect(mine.counts.delivered).to.be.at.least(1);
    expect(mine.settings.secret).to.equal('****');
    const r = await post(`/admin/destinations/${destId}/resume`);
    expect(r.body).to.include({ was_paused: false });
    expect((await post('/admin/destinations/dst_0000000000000000/resume')).status).to.equal(404);
  });
});

describe('admin API without ADMIN_TOKEN', () => {
  let s: TestApp;
  before(async () => {
    s = await startTestApp();
  });
  after(() => s.close());

  it('answers 404 on /admin paths, token or not', async () => {
    for (const headers of [{}, auth]) {
      const r = await fetch(`${s.url}/admin/events`, { headers });
      expect(r.status).to.equal(404);
      expect(((await r.json()) as any).error.code).to.equal('NOT_FOUND');
    }
  });
});

describe('admin API in /openapi.json', () => {
  it('describes every /admin route the router serves, bearer-authenticated', () => {
    const doc = withAdminPaths(buildOpenApi() as Record<string, unknown>);
    const router = adminRouter({ store: {} as never, plugins: new Map(), streams: {} as never, rulesState: () => ({ valid: true, errors: [] }) });
    const rules = rulesAdminRouter({ store: {} as never, watcher: {} as never, dir: '', drafts: {} as never, metrics: {} as never });
    const manage = manageRouter({ store: {} as never, plugins: new Map(), allowPrivateDestinations: false, maxReplay: 10 });
    const served = [...router.stack, ...rules.stack, ...manage.stack].flatMap((l) => l.methods.filter((m) => m !== 'HEAD').map((m) => `${m.toLowerCase()} ${String(l.path).replace(/:(\w+)/g, '{$1}').replace(/\/$/, '')}`));
    expect(served.length).to.be.greaterThan(8);
    for (const route of served) {
      const [method, path] = route.split(' ');
      expect(doc.paths[path]?.[method], route).to.be.an('object');
      expect(doc.paths[path][method].security).to.deep.equal([{ adminToken: [] }]);
    }
    expect(doc.components.securitySchemes.adminToken).to.include({ type: 'http', scheme: 'bearer' });
  });
});
