// The admin event trace masks the user's identifiers unless asked: in the payload and in the
// webhook request that carries them; `?reveal=identifiers` answers them clear and logs an
// `admin reveal` line with the admin token's name.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import { adminCall, lead, TOKEN } from './admin-client.ts';
import { startTestServer, waitFor, type TestServer, type TestAccount } from '../helpers/test-server.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { SETTINGS } from '../delivery/delivery-fixture.ts';

const USER = {
  email: 'Jane.Roe@example.org', phone: '+4915112345678', first_name: 'Jane', last_name: 'Roe',
  street: 'Hauptstrasse 5', city: 'Berlin', postal_code: '10115', country: 'DE', external_id: 'crm-77',
};
const CLEAR = [USER.email, USER.email.toLowerCase(), USER.phone, 'Hauptstrasse 5', 'Berlin', '10115'];

describe('admin API: identifiers masked in the event trace unless revealed', () => {
  let s: TestServer;
  let shop: TestAccount;
  let hook: DestinationDouble;
  const lines: any[] = [];

  before(async () => {
    const sink = new Writable({ write(chunk, _enc, cb) { for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l)); cb(); } });
    s = await startTestServer({ ADMIN_TOKENS: `ops.jane:${TOKEN}`, ALLOW_PRIVATE_DESTINATIONS: '1' }, { logger: pino({ level: 'info' }, sink) as never });
    shop = await s.account();
    hook = await startDestinationDouble();
    await s.running.store.destinations.add({ id: `dst_${randomBytes(8).toString('hex')}`, scriptId: shop.scriptId, type: 'webhook', name: 'hook', enabled: true, settings: SETTINGS.webhook(hook.url) });
  });
  after(async () => {
    await s.close();
    await hook.close();
  });

  it('masks e-mail, phone, names and address by default; reveals them on request, logged with the token name', async () => {
    expect((await s.post(INTAKE_PATHS.event, { ...lead('ID-1'), user: USER }, { account: shop })).status).to.equal(200);
    await hook.waitFor(() => hook.requests.some((r) => r.json().id === 'ID-1'), 10_000, 'ID-1 delivered');
    const [item] = (await adminCall(s.url, 'GET', '/admin/trace?q=ID-1')).body.items;
    let masked: any;
    await waitFor(async () => (masked = (await adminCall(s.url, 'GET', `/admin/events/${item.id}`)).body).deliveries[0]?.status === 'delivered', 5_000);
    expect(masked.identifiers).to.equal('masked');
    const user = masked.event.payload.user;
    for (const f of ['email', 'phone', 'first_name', 'last_name', 'street', 'city', 'postal_code']) expect(user[f], f).to.equal('[masked]');
    expect(user.country).to.equal('DE');
    expect(user.external_id).to.equal('crm-77');
    // The webhook carried the clear values: its traced request and the stored payload show none of them.
    const text = JSON.stringify(masked);
    for (const v of CLEAR) expect(text, v).not.to.contain(v);
    expect(lines.some((l) => l.msg === 'admin reveal')).to.equal(false);

    const revealed = (await adminCall(s.url, 'GET', `/admin/events/${item.id}?reveal=identifiers`)).body;
    expect(revealed.identifiers).to.equal('revealed');
    expect(revealed.event.payload.user.email).to.be.a('string').and.not.equal('[masked]');
    expect(JSON.stringify(revealed)).to.contain(USER.phone);
    const line = lines.find((l) => l.msg === 'admin reveal');
    expect(line.admin).to.deep.include({ action: 'reveal', what: 'event.identifiers', target: item.id, author: 'ops.jane' });
    expect(JSON.stringify(lines)).not.to.contain(USER.phone);
    expect(JSON.stringify(lines)).not.to.contain(TOKEN);
  });

  it('masks extra user keys and URL-encoded forms as the probe sent them (user.Email, user.mail, user.properties.email, %40)', async () => {
    const email = 'probe.person@example.org';
    const user = { ...USER, email, Email: email, mail: email, properties: { email } };
    const body = { ...lead('ID-2'), user, context: { ...lead('ID-2').context, url: `https://shop.example/contact?email=${encodeURIComponent(email)}` } };
    expect((await s.post(INTAKE_PATHS.event, body, { account: shop })).status).to.equal(200);
    await hook.waitFor(() => hook.requests.some((r) => r.json().id === 'ID-2'), 10_000, 'ID-2 delivered');
    const [item] = (await adminCall(s.url, 'GET', '/admin/trace?q=ID-2')).body.items;
    const masked = (await adminCall(s.url, 'GET', `/admin/events/${item.id}`)).body;
    const stored = (await s.running.store.events.list({ id: item.id, limit: 1 }))[0].payload as any;
    // Whatever intake kept of these keys, none of it shows clear.
    expect(Object.keys(stored.user)).to.include.members(['Email', 'mail', 'properties']);
    const text = JSON.stringify(masked).toLowerCase();
    for (const v of [email, encodeURIComponent(email), 'probe.person']) expect(text, v).not.to.contain(v.toLowerCase());
    expect(masked.event.payload.user).to.include({ Email: '[masked]', mail: '[masked]', external_id: 'crm-77', country: 'DE' });
    expect(masked.event.payload.user.properties).to.deep.equal({ email: '[masked]' });
  });

  it('refuses another reveal value with 400 INVALID_VALUE', async () => {
    const [item] = (await adminCall(s.url, 'GET', '/admin/trace?q=ID-1')).body.items;
    const r = await adminCall(s.url, 'GET', `/admin/events/${item.id}?reveal=everything`);
    expect(r.status).to.equal(400);
    expect(r.body.error.code).to.equal('INVALID_VALUE');
  });
});
