// Custom endpoint versions on a running server: a version added, made current, deprecated
// and retired by editing the folder, each answering within a few seconds without a restart;
// the Deprecation and Sunset headers and message of a deprecated version; uses counted per
// account, endpoint and version in /metrics and in the store; a broken change leaves the
// endpoint serving as it was.
import { expect } from 'chai';
import { mkdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, waitFor, type TestAccount, type TestServer } from '../helpers/test-server.ts';
import { customersRoot, FIXTURE_HANDLER, FIXTURE_SCHEMA, writeEndpoint } from './fixtures.ts';
import { openCustomRecordStore } from '../../src/store/sqlite/custom-records.ts';
import { sqliteFile } from '../../src/store/open-store.ts';

/** Version 2 renames n to m: the same event, another shape. */
const V2_SCHEMA = { ...FIXTURE_SCHEMA, required: ['m'], properties: { m: FIXTURE_SCHEMA.properties.n } };
const V2_HANDLER = FIXTURE_HANDLER.replace('body: { n: number }', 'body: { m: number }').replaceAll('body.n', 'body.m');

describe('custom endpoint versions: a running server follows the folder', function () {
  this.timeout(30_000);
  let root: string;
  let dir: string;
  let s: TestServer;
  let a: TestAccount;
  const config = (extra: Record<string, unknown>) => writeFileSync(join(dir, 'endpoint.json'), JSON.stringify({ description: 'fixture leads', ...extra }));
  const post = (body: unknown, version?: string) =>
    s.post('/service/custom/leads', body, { account: a, query: `id=${a.scriptId}&env=test`, headers: version === undefined ? {} : { 'x-service-endpoint-version': version } });
  const served = async (body: unknown, version: string | undefined, want: string) => {
    const r = await post(body, version);
    return r.status === 200 && r.headers.get('x-service-endpoint-version') === want;
  };

  before(async () => {
    root = customersRoot();
    // A folder as it was before versions: version 1 at its root.
    dir = writeEndpoint(root, 'acme', 'leads');
    s = await startTestServer({ CUSTOMERS_DIR: root });
    a = await s.account({ tier: 'CUSTOM' });
    await s.accounts.update(a.scriptId, { customer: 'acme' });
  });
  after(async () => {
    await s.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('a folder without versions is version 1; an unknown version is refused with the versions served', async () => {
    expect(await served({ n: 1 }, undefined, '1')).to.equal(true);
    const r = await post({ n: 1 }, '2');
    expect(r.status).to.equal(400);
    expect(r.body.error_context).to.deep.equal({ field: 'X-Service-Endpoint-Version', expected_format: 'a version this endpoint serves: 1 (current); without one, the current version' });
  });

  it('version 2 added: it answers when named within a few seconds, and the rest still get version 1', async () => {
    mkdirSync(join(dir, 'versions/2'), { recursive: true });
    writeFileSync(join(dir, 'versions/2/schema.json'), JSON.stringify(V2_SCHEMA));
    writeFileSync(join(dir, 'versions/2/example.json'), JSON.stringify({ m: 1 }));
    writeFileSync(join(dir, 'versions/2/handler.ts'), V2_HANDLER);
    config({ current_version: 1, versions: { 2: { state: 'active' } } });
    expect(await waitFor(() => served({ m: 2 }, '2', '2'), 8_000), 'version 2 answers').to.equal(true);
    const r = await post({ m: 2 }, '2');
    expect(r.body.messages).to.deep.equal(['got 2', 'test mode: nothing was stored or delivered']);
    expect(await served({ n: 3 }, undefined, '1')).to.equal(true);
  });

  it('version 2 made current and 1 deprecated: 1 answers with Deprecation, Sunset and a message', async () => {
    config({ current_version: 2, versions: { 1: { state: 'deprecated', deprecated_at: '2026-05-01', sunset: '2099-09-30' } } });
    expect(await waitFor(() => served({ m: 4 }, undefined, '2'), 8_000), 'no version now means 2').to.equal(true);
    const old = await post({ n: 5 }, '1');
    expect(old.status, old.text).to.equal(200);
    expect(old.headers.get('deprecation')).to.equal(`@${Date.parse('2026-05-01T00:00:00Z') / 1000}`);
    expect(old.headers.get('sunset')).to.equal('Wed, 30 Sep 2099 00:00:00 GMT');
    expect(old.body.messages).to.deep.equal([
      'got 5',
      'version 1 of leads is deprecated and stops being served after 2099-09-30: move to version 2 (X-Service-Endpoint-Version: 2)',
      'test mode: nothing was stored or delivered',
    ]);
    const current = await post({ m: 6 });
    expect(current.headers.get('deprecation')).to.equal(null);
  });

  it('every use is counted per account, endpoint and version: /metrics and the store', async () => {
    const metrics = await fetch(`${s.url}/metrics`).then((r) => r.text());
    const line = (v: number) => new RegExp(`^tracklane_custom_endpoint_version_requests_total\\{script_id="${a.scriptId}",customer="acme",endpoint="leads",version="${v}",env="test"\\} (\\d+)$`, 'm');
    const counted = [1, 2].map((v) => Number(line(v).exec(metrics)?.[1]));
    expect(counted[0]).to.be.greaterThan(2);
    expect(counted[1]).to.be.greaterThan(2);
    const records = openCustomRecordStore(sqliteFile({ dataDir: s.dataDir }));
    try {
      // Written within a second of each use: the store catches up with the counter.
      const uses = async () => (await records.listUsage('acme')).map((u) => [u.scriptId, u.endpoint, u.version, u.env, u.uses]);
      const want = [[a.scriptId, 'leads', 1, 'test', counted[0]], [a.scriptId, 'leads', 2, 'test', counted[1]]];
      expect(await waitFor(async () => JSON.stringify(await uses()) === JSON.stringify(want), 5_000), JSON.stringify(await uses())).to.equal(true);
      expect((await records.listUsage('acme')).every((u) => u.lastUsedAt >= u.firstUsedAt)).to.equal(true);
    } finally {
      await records.close();
    }
  });

  it('a change that does not load leaves the endpoint serving as it was', async () => {
    config({ current_version: 2, versions: { 1: { state: 'deprecated', deprecated_at: '2026-05-01', sunset: '2099-09-30' }, 5: { state: 'active' } } });
    expect(await s.running.endpoints.scan()).to.equal(0);
    expect(await served({ n: 7 }, '1', '1')).to.equal(true);
    expect(await served({ m: 7 }, undefined, '2')).to.equal(true);
  });

  it('version 1 retired (its files and entry removed): refused with the versions still served', async () => {
    for (const f of ['schema.json', 'handler.ts', 'example.json']) unlinkSync(join(dir, f));
    config({ current_version: 2 });
    expect(await waitFor(async () => (await post({ n: 8 }, '1')).status === 400, 8_000), 'version 1 is refused').to.equal(true);
    const r = await post({ n: 8 }, '1');
    expect(r.body.error_context.expected_format).to.equal('a version this endpoint serves: 2 (current); without one, the current version');
    expect(await served({ m: 9 }, undefined, '2')).to.equal(true);
  });
});
