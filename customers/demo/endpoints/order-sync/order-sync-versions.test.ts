// demo/order-sync's two versions over real HTTP: version 1 sends an order's total and one
// customer object, version 2 (current) grand_total and customer / contact / address. Old and
// new clients both succeed with the same events; an account pinned to 1 gets 1 without
// naming it; once version 1 is retired (its folder and entry removed) it is refused with the
// versions still served.
import { expect } from 'chai';
import { copyFileSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEndpointHarness, type EndpointHarness, startTestServer, tempDir, waitFor, type TestServer } from 'tracklane/sdk/testing';

const DIR = fileURLToPath(new URL('.', import.meta.url));
const KEY = { 'x-api-key': 'demo_order_sync_key_3f9a1c7e52b84d06' };
const example = (v: number) => JSON.parse(readFileSync(join(DIR, `versions/${v}/example.json`), 'utf8'));

describe('demo/order-sync: versions 1 and 2', () => {
  let h: EndpointHarness;
  before(async () => {
    h = await startEndpointHarness(DIR);
  });
  after(() => h.close());

  it('an old client (version 1 named) and a new one (nothing named: current 2) both succeed, with the same events', async () => {
    const old = await h.post(example(1), { env: 'test', headers: { ...KEY, 'x-service-endpoint-version': '1' } });
    expect(old.status, old.text).to.equal(200);
    expect(old.headers.get('x-service-endpoint-version')).to.equal('1');
    expect(old.headers.get('deprecation')).to.equal(null);
    const now = await h.post(example(2), { env: 'test', headers: KEY });
    expect(now.status, now.text).to.equal(200);
    expect(now.headers.get('x-service-endpoint-version')).to.equal('2');
    expect(now.body.messages).to.deep.equal(old.body.messages);
    const events = (r: typeof old) => r.body.custom_data.events.map((e: any) => e.payload);
    expect(events(now)).to.deep.equal(events(old));
    expect(events(now)[0].user).to.include({ email: 'jane.doe@example.com', phone: '+40722123456', city: 'Cluj-Napoca', first_name: 'Jane' });
    expect(events(now)[0].event).to.include({ value: 144.8 });
  });

  it('?version=1 works like the header; the old shape sent to version 2 is refused naming the renamed field', async () => {
    const q = await h.post(example(1), { headers: KEY, query: `id=${h.account.scriptId}&env=test&version=1` });
    expect(q.status, q.text).to.equal(200);
    const wrong = await h.post(example(1), { env: 'test', headers: KEY });
    expect(wrong.status).to.equal(400);
    expect(wrong.body.error_code).to.equal('CUSTOM_VALIDATION_ERROR');
    expect(wrong.body.messages.join('\n')).to.match(/grand_total/);
  });

  it('an account pinned to version 1 gets it without naming it; a named version still wins', async () => {
    const pinned = await h.makeAccount();
    await h.server.accounts.update(pinned.scriptId, { pinEndpoints: { 'order-sync': 1 } });
    const r = await h.post(example(1), { env: 'test', headers: KEY, account: pinned });
    expect(r.status, r.text).to.equal(200);
    expect(r.headers.get('x-service-endpoint-version')).to.equal('1');
    const named = await h.post(example(2), { env: 'test', headers: { ...KEY, 'x-service-endpoint-version': '2' }, account: pinned });
    expect(named.status, named.text).to.equal(200);
    expect(named.headers.get('x-service-endpoint-version')).to.equal('2');
  });

  describe('after version 1 is retired', () => {
    let root: string;
    let s: TestServer;
    before(async () => {
      // The demo as it is once retired: version 2's folder (linked, so its imports resolve), endpoint.json without version 1,
      // as another customer's (the shipped demo customer keeps serving both versions beside it).
      root = tempDir('tl-retired-');
      const ep = join(root, 'demo-retired/endpoints/order-sync');
      mkdirSync(join(ep, 'versions'), { recursive: true });
      symlinkSync(join(DIR, 'versions/2'), join(ep, 'versions/2'), 'dir');
      copyFileSync(join(DIR, 'README.md'), join(ep, 'README.md'));
      const config = JSON.parse(readFileSync(join(DIR, 'endpoint.json'), 'utf8'));
      delete config.versions['1'];
      writeFileSync(join(ep, 'endpoint.json'), JSON.stringify(config));
      s = await startTestServer({ CUSTOMERS_DIR: root });
    });
    after(async () => {
      await s.close();
      rmSync(root, { recursive: true, force: true });
    });

    it('a client naming version 1, or an account still pinned to it, is refused with the versions served', async () => {
      const a = await s.account({ tier: 'CUSTOM' });
      await s.accounts.update(a.scriptId, { customer: 'demo-retired' });
      const named = await s.post('/service/custom/order-sync', example(1), { account: a, query: `id=${a.scriptId}&env=test`, headers: { ...KEY, 'x-service-endpoint-version': '1' } });
      expect(named.status, named.text).to.equal(400);
      expect(named.body).to.deep.equal({
        result: 'error',
        messages: ['Version 1 of order-sync is not served (unknown or retired)'],
        error_code: 'CUSTOM_VALIDATION_ERROR',
        error_context: { field: 'X-Service-Endpoint-Version', expected_format: 'a version this endpoint serves: 2 (current); without one, the current version' },
      });
      await s.accounts.update(a.scriptId, { pinEndpoints: { 'order-sync': 1 } });
      // The server sees an account change within 2 s (its credential cache).
      const send = () => s.post('/service/custom/order-sync', example(1), { account: a, query: `id=${a.scriptId}&env=test`, headers: KEY });
      expect(await waitFor(async () => (await send()).body.error_context?.field === 'version', 5_000)).to.equal(true);
      const pinned = await send();
      expect(pinned.status, pinned.text).to.equal(400);
      expect(pinned.body.error_context).to.deep.equal({ field: 'version', expected_format: 'a version this endpoint serves: 2 (current); without one, the current version' });
      expect(pinned.body.messages[0]).to.match(/pinned to version 1 of order-sync, which is no longer served/);
    });
  });
});
