// The admin API's rules: list what serves each place, check a draft (errors at JSON paths),
// diff it against the live rules, preview it on a stored event, publish it (the next event
// is mapped with it), see the history, roll back (the next event uses the old rules), and
// revert to the plugin default.
import { expect } from 'chai';
import { adminCall, auth, lead, TOKEN } from './admin-client.ts';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, tempDir, type TestServer, type TestAccount } from '../helpers/test-server.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { ROOT } from '../helpers/spawn-server.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { SETTINGS } from '../delivery/delivery-fixture.ts';
import { PLUGINS_DIR, shippedPluginNames } from '../helpers/shipped-plugins.ts';

const fileRules = JSON.parse(readFileSync(join(ROOT, 'plugins/webhook/rules.json'), 'utf8'));
/** The shipped webhook rules with one more output key. */
const withNote = (note: string) => {
  const doc = structuredClone(fileRules);
  doc.rules[0].output['data.note'] = note;
  return doc;
};

describe('admin API: rules', () => {
  let s: TestServer;
  let shop: TestAccount;
  let hook: DestinationDouble;
  let rulesDir: string;
  const call = (method: string, path: string, body?: unknown) => adminCall(s.url, method, path, body);
  /** Sends an event and returns the body the webhook double received for it. */
  const deliver = async (id: string) => {
    expect((await s.post(INTAKE_PATHS.event, lead(id), { account: shop })).status).to.equal(200);
    await hook.waitFor(() => hook.requests.some((r) => r.json().id === id), 10_000, `${id} delivered`);
    return hook.requests.find((r) => r.json().id === id)!.json();
  };

  before(async () => {
    // rules/ ships no rule files; the project's own holds whatever the operator put there
    // (a copied webhook.json would make the webhook's source 'file').
    rulesDir = tempDir('tl-rules-');
    s = await startTestServer({ ADMIN_TOKEN: TOKEN, ALLOW_PRIVATE_DESTINATIONS: '1', RULES_DIR: rulesDir });
    shop = await s.account();
    hook = await startDestinationDouble();
    await s.running.store.destinations.add({ id: `dst_${randomBytes(8).toString('hex')}`, scriptId: shop.scriptId, type: 'webhook', name: 'hook', enabled: true, settings: SETTINGS.webhook(hook.url) });
  });
  after(async () => {
    await s.close();
    await hook.close();
    rmSync(rulesDir, { recursive: true, force: true });
  });

  it('lists every place with its source: the plugins\' own defaults before anything is published', async () => {
    const r = await call('GET', '/admin/rules');
    expect(r.body.valid).to.equal(true);
    const webhook = r.body.items.find((i: any) => i.destination === 'webhook');
    expect(webhook).to.include({ scope: 'default', source: 'plugin', version: null, rules: 1 });
    // Every destination ships its defaults in its own folder (rules/ holds only overrides).
    const withDefaults = shippedPluginNames().filter((name) => existsSync(join(PLUGINS_DIR, name, 'rules.json')));
    for (const name of withDefaults) {
      expect(r.body.items.find((i: any) => i.destination === name && i.scope === 'default'), name).to.include({ source: 'plugin', version: null });
    }
    const doc = await call('GET', '/admin/rules/webhook');
    expect(doc.body.document).to.deep.equal(fileRules);
  });

  it('checks a draft exactly as loading does, naming the JSON path of each problem', async () => {
    const bad = withNote('x');
    bad.rules[0].output['data.note'] = { nope: [1] };
    const r = await call('POST', '/admin/rules/webhook/check', { scope: 'default', document: bad });
    expect(r.body.ok).to.equal(false);
    expect(r.body.errors[0].path).to.equal('/rules/0/output/data.note');
    expect(r.body.errors[0].message).to.match(/nope/);
    expect((await call('POST', '/admin/rules/webhook/check', { scope: 'default', document: withNote('x') })).body).to.deep.equal({ ok: true, errors: [] });
    const publish = await call('POST', '/admin/rules/webhook/publish', { scope: 'default', document: bad, message: 'broken' });
    expect(publish.status).to.equal(422);
    expect(publish.body.error.code).to.equal('RULES_INVALID');
    expect(publish.body.error.details.errors[0].path).to.equal('/rules/0/output/data.note');
    expect((await call('GET', '/admin/rules/webhook/history')).body.items).to.have.length(0);
  });

  it('checks literal outputs against the native schema: a constant it refuses fails check and publish, computed values pass', async () => {
    const ga4 = (name: unknown) => ({ destination: 'ga4', rules: [{ id: 'ga4.lead', event: 'lead', output: { name, 'params.value': { var: 'event.value' }, 'params.page_referrer': null } }] });
    const r = await call('POST', '/admin/rules/ga4/check', { scope: 'default', document: ga4(42) });
    expect(r.body).to.deep.equal({ ok: false, errors: [{ path: '/rules/0/output/name', message: 'the ga4 native schema refuses this value (/name: must be string): the rule could never send' }] });
    const publish = await call('POST', '/admin/rules/ga4/publish', { scope: 'default', document: ga4(42), message: 'numeric name' });
    expect(publish.status).to.equal(422);
    expect(publish.body.error.details.errors[0].path).to.equal('/rules/0/output/name');
    expect((await call('POST', '/admin/rules/ga4/check', { scope: 'default', document: ga4({ var: 'event.name' }) })).body).to.deep.equal({ ok: true, errors: [] });
    expect((await call('POST', '/admin/rules/ga4/check', { scope: 'default', document: ga4('generate_lead') })).body).to.deep.equal({ ok: true, errors: [] });
    expect((await call('GET', '/admin/rules/ga4/history')).body.items).to.have.length(0);
  });

  it('diffs, previews on a stored event, publishes, and the next event uses the published rules', async () => {
    const first = await deliver('RULE-1');
    expect(first.data.note).to.equal(undefined);
    const diff = await call('POST', '/admin/rules/webhook/diff', { scope: 'default', document: withNote('v2') });
    expect(diff.body.changes).to.have.length(1);
    expect(diff.body.changes[0]).to.include({ id: 'webhook.event', change: 'changed' });

    const stored = (await call('GET', '/admin/trace?q=RULE-1')).body.items[0];
    const preview = await call('POST', '/admin/rules/webhook/preview', { scope: 'default', document: withNote('v2'), event_id: stored.id });
    expect(preview.status, JSON.stringify(preview.body)).to.equal(200);
    expect(preview.body.changed).to.equal(true);
    expect(preview.body.before[0].requests[0].body.data.note).to.equal(undefined);
    expect(preview.body.after[0].requests[0].body.data.note).to.equal('v2');
    expect(preview.body.after[0].requests[0].headers['webhook-signature']).to.equal('****');

    const published = await call('POST', '/admin/rules/webhook/publish', { scope: 'default', document: withNote('v2'), message: 'add a note' });
    expect(published.status).to.equal(201);
    const v2 = published.body.version;
    expect((await deliver('RULE-2')).data.note).to.equal('v2');
    const list = (await call('GET', '/admin/rules')).body.items.find((i: any) => i.destination === 'webhook');
    expect(list).to.include({ source: 'store', version: v2 });
    expect((await call('GET', `/admin/rules/versions/${v2}`)).body).to.include({ author: 'admin', message: 'add a note', live: true });
  });

  it('replays the last stored events through a draft and counts what would change', async () => {
    const other = await s.account();
    await s.post(INTAKE_PATHS.event, lead('OTHER-1'), { account: other }); // no webhook destination: not compared
    const same = await call('POST', '/admin/rules/webhook/replay', { scope: 'default', document: (await call('GET', '/admin/rules/webhook')).body.document, last: 50 });
    expect(same.status, JSON.stringify(same.body)).to.equal(200);
    expect(same.body.events).to.be.at.least(2);
    expect(same.body).to.include({ events_changed: 0, destinations_changed: 0 });
    expect(same.body.requests_before).to.equal(same.body.requests_after);
    const r = await call('POST', '/admin/rules/webhook/replay', { scope: 'default', document: withNote('replayed'), last: 2 });
    expect(r.body).to.include({ considered: 2, events_changed: 1, destinations_changed: 1 });
    expect(r.body.samples[0]).to.include({ event_id: 'RULE-2' });
    const own = await call('POST', '/admin/rules/webhook/replay', { scope: shop.scriptId, document: withNote('acct'), last: 10 });
    expect(own.body.events_changed).to.equal(own.body.events);
    expect((await call('POST', '/admin/rules/webhook/replay', { scope: 'default', document: withNote('x'), last: 0 })).status).to.equal(400);
  });

  it('keeps history and rolls back to an earlier version', async () => {
    const v3 = (await call('POST', '/admin/rules/webhook/publish', { scope: 'default', document: withNote('v3'), message: 'note v3' })).body.version;
    expect((await deliver('RULE-3')).data.note).to.equal('v3');
    const history = (await call('GET', '/admin/rules/webhook/history')).body.items;
    expect(history.map((h: any) => [h.version, h.action, h.live])).to.deep.equal([[v3, 'publish', true], [v3 - 1, 'publish', false]]);
    const back = await call('POST', '/admin/rules/webhook/rollback', { scope: 'default', version: v3 - 1, message: 'v3 was wrong' });
    expect(back.status, JSON.stringify(back.body)).to.equal(200);
    expect((await deliver('RULE-4')).data.note).to.equal('v2');
    const after = (await call('GET', '/admin/rules/webhook/history')).body.items;
    expect(after[0]).to.include({ version: v3 - 1, action: 'rollback', message: 'v3 was wrong', live: true });
    // Only the change that made the version live now is marked, not its first publish.
    expect(after.filter((h: any) => h.live)).to.have.length(1);
    expect((await call('POST', '/admin/rules/webhook/rollback', { scope: 'default', version: 999999 })).status).to.equal(404);
    expect((await call('POST', '/admin/rules/ga4/rollback', { scope: 'default', version: v3 })).status).to.equal(404);
  });

  it('reverts to the plugin default: no version live there, the next event mapped by the default, recorded; again is 409', async () => {
    const live = (await call('GET', '/admin/rules/webhook')).body;
    expect(live.source).to.equal('store');
    const r = await call('POST', '/admin/rules/webhook/revert', { scope: 'default', message: 'back to the default' });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body).to.deep.equal({ reverted_from: live.version, source: 'plugin', file: r.body.file });
    expect((await call('GET', '/admin/rules/webhook')).body).to.include({ source: 'plugin', version: null });
    expect((await call('GET', '/admin/rules/webhook')).body.document).to.deep.equal(fileRules);
    expect((await deliver('RULE-5')).data).not.to.have.property('note');
    const history = (await call('GET', '/admin/rules/webhook/history')).body.items;
    expect(history[0]).to.include({ version: live.version, action: 'revert', message: 'back to the default', live: false });
    expect(history.filter((h: any) => h.live)).to.have.length(0);
    const again = await call('POST', '/admin/rules/webhook/revert', { scope: 'default' });
    expect(again.status).to.equal(409);
    expect(again.body.error.code).to.equal('CONFLICT');
    // A published version can be made live again after a revert.
    expect((await call('POST', '/admin/rules/webhook/rollback', { scope: 'default', version: live.version })).status).to.equal(200);
    expect((await deliver('RULE-6')).data.note).to.equal('v2');
  });
});
