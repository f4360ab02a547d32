// The admin API's share of the CLI: accounts (create, update, rotate), destinations (add with
// the SSRF guard, merge-patch, remove), deliveries (pages, one with attempts, bulk replay,
// retry now) and the plugins loaded — each change logged as an `admin change`.
import { expect } from 'chai';
import { adminCall, auth, lead, TOKEN } from './admin-client.ts';
import { Writable } from 'node:stream';
import pino from 'pino';
import { startTestServer, waitFor, type TestServer } from '../helpers/test-server.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { SETTINGS, WEBHOOK_SECRET } from '../delivery/delivery-fixture.ts';


describe('admin API: accounts', () => {
  let s: TestApp;
  const call = (method: string, path: string, body?: unknown) => adminCall(s.url, method, path, body);
  before(async () => (s = await startTestApp({ ADMIN_TOKEN: TOKEN })));
  after(() => s.close());

  it('creates an account whose token works on endpoint 1, updates it, rotates the token', async () => {
    const created = await call('POST', '/admin/accounts', { name: 'Console shop', tier: 'FLEX', addon: true, country: 'RO' });
    expect(created.status).to.equal(201);
    expect(created.body).to.include({ name: 'Console shop', tier: 'FLEX', addon: true, country: 'RO' });
    const acc = { scriptId: created.body.script_id, token: created.body.access_token };
    expect((await s.post(INTAKE_PATHS.event, lead('A-1'), { account: acc })).status).to.equal(200);
    const updated = await call('PATCH', `/admin/accounts/${acc.scriptId}`, { name: 'Renamed', rate_limit: 50, approve_events: ['quote_sent'] });
    expect(updated.body).to.include({ name: 'Renamed', rate_limit: 50 });
    expect(updated.body.approved_events).to.deep.equal(['quote_sent']);
    expect((await call('PATCH', `/admin/accounts/${acc.scriptId}`, { tier: 'GOLD' })).status).to.equal(400);
    expect((await call('PATCH', `/admin/accounts/${acc.scriptId}`, { addon: 'yes' })).body.error.code).to.equal('INVALID_TYPE');
    expect((await call('PATCH', '/admin/accounts/ZZZZZZZZ', { name: 'x' })).status).to.equal(404);
    expect(created.body.consent_default).to.equal('granted');
    expect((await call('PATCH', `/admin/accounts/${acc.scriptId}`, { consent_default: 'denied' })).body.consent_default).to.equal('denied');
    const badConsent = await call('PATCH', `/admin/accounts/${acc.scriptId}`, { consent_default: 'maybe' });
    expect([badConsent.status, badConsent.body.error.code]).to.deep.equal([400, 'INVALID_VALUE']);
    const rotated = await call('POST', `/admin/accounts/${acc.scriptId}/rotate-token`, { grace_hours: 0 });
    expect(rotated.body.access_token).to.be.a('string').and.not.equal(acc.token);
    expect((await s.post(INTAKE_PATHS.event, lead('A-2'), { account: { ...acc, token: rotated.body.access_token } })).status).to.equal(200);
    expect((await call('POST', '/admin/accounts', { tier: 'FLEX' })).status).to.equal(400);
  });

  it('a change of customer drops the endpoint pins, which named the old customer\'s endpoints, and the answer says which', async () => {
    const { scriptId } = await s.account();
    await s.accounts.update(scriptId, { customer: 'north', pinEndpoints: { leads: 2, orders: 1 } });
    const same = await call('PATCH', `/admin/accounts/${scriptId}`, { customer: 'north', name: 'Kept' });
    expect(same.body).to.deep.include({ endpoint_pins: { leads: 2, orders: 1 }, unpinned_endpoints: {} });
    const moved = await call('PATCH', `/admin/accounts/${scriptId}`, { customer: 'south' });
    expect(moved.status).to.equal(200);
    expect(moved.body).to.deep.include({ customer: 'south', endpoint_pins: {}, unpinned_endpoints: { leads: 2, orders: 1 } });
    expect((await s.running.store.accounts.get(scriptId))!.endpointPins).to.deep.equal({});
  });
});

describe('admin API: destinations and deliveries', () => {
  let s: TestServer;
  let hook: DestinationDouble;
  const call = (method: string, path: string, body?: unknown) => adminCall(s.url, method, path, body);

  before(async () => {
    // A full server: these check changes through what delivery sends to a webhook double.
    s = await startTestServer({ ADMIN_TOKEN: TOKEN, ALLOW_PRIVATE_DESTINATIONS: '1' });
    hook = await startDestinationDouble();
  });
  after(async () => {
    await s.close();
    await hook.close();
  });

  it('adds, merge-patches and removes a destination; answers mask secrets', async () => {
    const acc = await s.account();
    const added = await call('POST', '/admin/destinations', { script_id: acc.scriptId, type: 'webhook', name: 'orders', config: SETTINGS.webhook(hook.url) });
    expect(added.status, JSON.stringify(added.body)).to.equal(201);
    expect(added.body.config.secret).to.equal('****');
    expect(JSON.stringify(added.body)).not.to.contain(WEBHOOK_SECRET);
    const bad = await call('POST', '/admin/destinations', { script_id: acc.scriptId, type: 'webhook', config: { url: 'not a url' } });
    expect(bad.status).to.equal(400);
    expect((await call('POST', '/admin/destinations', { script_id: acc.scriptId, type: 'nope', config: {} })).body.error.message).to.match(/unknown destination type/);
    const patched = await call('PATCH', `/admin/destinations/${added.body.id}`, { config: { url: `${hook.url}/v2` }, name: 'orders v2' });
    expect(patched.body).to.include({ name: 'orders v2' });
    expect(patched.body.config).to.deep.equal({ url: `${hook.url}/v2`, secret: '****' });
    await s.post(INTAKE_PATHS.event, lead('D-1'), { account: acc });
    await hook.waitFor(() => hook.requests.some((r) => r.path === '/v2' && r.json().id === 'D-1'), 10_000, 'D-1 at the patched URL');
    const removed = await call('DELETE', `/admin/destinations/${added.body.id}`);
    expect(removed.body).to.include({ removed: true });
    expect((await call('DELETE', `/admin/destinations/${added.body.id}`)).status).to.equal(404);
  });

  it('pages deliveries, shows one with its attempts, bulk-replays and makes retries due now', async () => {
    const acc = await s.account();
    const dest = await call('POST', '/admin/destinations', { script_id: acc.scriptId, type: 'webhook', name: 'pages', config: SETTINGS.webhook(`${hook.url}/pages`) });
    hook.otherwise((req) => (req.path.startsWith('/pages/') ? { status: 301 } : { status: 200 }));
    for (const id of ['G-1', 'G-2', 'G-3']) await s.post(INTAKE_PATHS.event, lead(id), { account: acc });
    await hook.waitFor(() => hook.requests.filter((r) => r.path.startsWith('/pages/')).length === 3, 10_000, 'three attempts');
    let failed: any[] = [];
    await waitFor(async () => (failed = (await call('GET', `/admin/deliveries?script_id=${acc.scriptId}&status=failed`)).body.items).length === 3, 5_000);
    expect(failed).to.have.length(3);
    const first = await call('GET', `/admin/deliveries?script_id=${acc.scriptId}&limit=2`);
    expect(first.body.items.map((d: any) => d.event_id)).to.deep.equal(['G-3', 'G-2']);
    const second = await call('GET', `/admin/deliveries?script_id=${acc.scriptId}&limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body.items.map((d: any) => d.event_id)).to.deep.equal(['G-1']);
    expect(second.body.next_cursor).to.equal(null);
    const one = await call('GET', `/admin/deliveries/${failed[0].id}`);
    expect(one.body.attempt_log).to.have.length(1);
    expect(one.body.attempt_log[0]).to.include({ status_code: 301, outcome: 'permanent' });
    hook.otherwise({ status: 200 });
    expect((await call('POST', '/admin/deliveries/replay', { destination_id: dest.body.id, statuses: ['delivered'] })).status).to.equal(409);
    const unscoped = await call('POST', '/admin/deliveries/replay', {});
    expect(unscoped.status).to.equal(400);
    expect(unscoped.body.error).to.include({ code: 'REQUIRED_FIELD_MISSING' });
    expect((await call('POST', '/admin/deliveries/replay', { event_id: 'G-1', force: true })).status, 'an event id is no scope').to.equal(400);
    expect((await call('POST', '/admin/deliveries/replay', { all: true, dry_run: true })).body).to.deep.equal({ would_replay: 3, max_per_call: 10_000, statuses: ['failed', 'dead'] });
    expect((await call('POST', '/admin/deliveries/replay', { script_id: acc.scriptId, dry_run: true })).body).to.deep.include({ would_replay: 3 });
    expect((await call('GET', `/admin/deliveries?script_id=${acc.scriptId}&status=failed`)).body.items, 'a dry run changes nothing').to.have.length(3);
    const replayed = await call('POST', '/admin/deliveries/replay', { destination_id: dest.body.id });
    expect(replayed.body).to.deep.equal({ replayed: 3, left: 0, max_per_call: 10_000, statuses: ['failed', 'dead'] });
    await hook.waitFor(() => hook.requests.filter((r) => r.path.startsWith('/pages/')).length === 6, 10_000, 'three re-sends');
    expect((await call('POST', '/admin/deliveries/retry-now', { destination_id: dest.body.id })).body).to.have.property('due');
    expect((await call('GET', '/admin/plugins')).body.items.map((p: any) => p.name)).to.include.members(['ga4', 'webhook']);
  });

  it('a delivery delivered by its first attempt (no row) round-trips by its derived id: pages, shows with its attempt, replays with force', async () => {
    const acc = await s.account();
    await call('POST', '/admin/destinations', { script_id: acc.scriptId, type: 'webhook', name: 'derived', config: SETTINGS.webhook(`${hook.url}/derived`) });
    // Once the destination's lane runs (the first event may be fanned out before: a stored row), deliveries are handed to it.
    await s.post(INTAKE_PATHS.event, lead('V-0'), { account: acc });
    await hook.waitFor(() => hook.requests.some((r) => r.path.startsWith('/derived') && r.json().id === 'V-0'), 10_000, 'the lane runs');
    for (const id of ['V-1', 'V-2', 'V-3']) await s.post(INTAKE_PATHS.event, lead(id), { account: acc });
    let items: any[] = [];
    await waitFor(async () => (items = (await call('GET', `/admin/deliveries?script_id=${acc.scriptId}&status=delivered`)).body.items
      .filter((d: any) => d.event_id !== 'V-0')).length === 3, 10_000);
    expect(items.map((d) => Number.isSafeInteger(d.id) && d.id > 2 ** 52), 'ids derived from their attempts').to.deep.equal([true, true, true]);
    const first = await call('GET', `/admin/deliveries?script_id=${acc.scriptId}&limit=2`);
    const second = await call('GET', `/admin/deliveries?script_id=${acc.scriptId}&limit=2&cursor=${first.body.next_cursor}`);
    expect([...first.body.items, ...second.body.items].map((d: any) => d.id).filter((id: number) => id > 2 ** 52).slice(0, 3), 'pages')
      .to.deep.equal(items.map((d) => d.id));
    const one = await call('GET', `/admin/deliveries/${items[0].id}`);
    expect(one.body).to.include({ id: items[0].id, status: 'delivered', event_id: items[0].event_id });
    expect(one.body.attempt_log.map((a: any) => a.status_code)).to.deep.equal([200]);
    expect((await call('POST', `/admin/deliveries/${items[0].id}/replay`, { force: true })).body).to.deep.equal({ replayed: 1 });
    await hook.waitFor(() => hook.requests.filter((r) => r.path.startsWith('/derived') && r.json().id === items[0].event_id).length === 2, 10_000, 'sent again');
    expect((await call('GET', `/admin/deliveries/${items[0].id}`)).status, 'a row took it over').to.equal(404);
  });

  it('retry-now needs a scope or "all": true, as a bulk replay does; unscoped, every tenant keeps its backoff', async () => {
    const [shop, other] = [await s.account(), await s.account()];
    const dests = await Promise.all([shop, other].map(async (acc) =>
      (await call('POST', '/admin/destinations', { script_id: acc.scriptId, type: 'webhook', name: 'later', config: SETTINGS.webhook(`${hook.url}/later`) })).body.id as string));
    hook.otherwise((req) => (req.path.startsWith('/later/') ? { status: 503 } : { status: 200 }));
    for (const acc of [shop, other]) await s.post(INTAKE_PATHS.event, lead(`R-${acc.scriptId}`), { account: acc });
    const waiting = async () => (await Promise.all(dests.map(async (d) => (await call('GET', `/admin/deliveries?destination_id=${d}`)).body.items[0]))) as any[];
    let before: any[] = [];
    await waitFor(async () => (before = await waiting()).every((d) => d?.status === 'pending' && d.attempts === 1), 10_000);
    expect(before.map((d) => [d.status, d.attempts])).to.deep.equal([['pending', 1], ['pending', 1]]);
    const replayRefusal = (await call('POST', '/admin/deliveries/replay', {})).body.error;
    for (const body of [undefined, {}, { all: false }, { event_id: `R-${shop.scriptId}` }]) {
      const r = await call('POST', '/admin/deliveries/retry-now', body);
      expect(r.status, JSON.stringify(body)).to.equal(400);
      expect(r.body.error).to.deep.equal({ ...replayRefusal, message: r.body.error.message });
      expect(r.body.error.message).to.match(/^retry-now needs a scope: an account \(script_id\) or a destination \(destination_id\), or "all"/);
    }
    expect((await call('POST', '/admin/deliveries/retry-now', { all: 'true' })).body.error.code).to.equal('INVALID_TYPE');
    expect((await waiting()).map((d) => d.next_attempt_at), 'nothing was made due').to.deep.equal(before.map((d) => d.next_attempt_at));
    hook.otherwise({ status: 200 });
    expect((await call('POST', '/admin/deliveries/retry-now', { script_id: shop.scriptId })).body).to.deep.equal({ due: 1 });
    expect((await waiting())[1].next_attempt_at, 'the other tenant keeps its backoff').to.equal(before[1].next_attempt_at);
    expect((await call('POST', '/admin/deliveries/retry-now', { all: true })).status).to.equal(200);
  });
});

describe('admin API: every change is logged', () => {
  it('writes an `admin change` line naming the action and target, never the token', async () => {
    const lines: any[] = [];
    const sink = new Writable({ write(chunk, _enc, cb) { for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l)); cb(); } });
    const s = await startTestApp({ ADMIN_TOKEN: TOKEN }, { logger: pino({ level: 'info' }, sink) as never });
    try {
      const r = await fetch(`${s.url}/admin/accounts`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Logged' }) });
      const { script_id: scriptId } = (await r.json()) as { script_id: string };
      const line = lines.find((l) => l.msg === 'admin change');
      expect(line.admin).to.deep.include({ action: 'account.create', target: scriptId });
      expect(JSON.stringify(lines)).not.to.contain(TOKEN);
    } finally {
      await s.close();
    }
  });
});
