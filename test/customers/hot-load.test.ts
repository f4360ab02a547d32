// A new custom endpoint folder answers without a restart; a broken one is logged and
// skipped while the others keep serving.
import { expect } from 'chai';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, waitFor, type TestAccount, type TestServer } from '../helpers/test-server.ts';
import { customersRoot, writeEndpoint } from './fixtures.ts';

describe('custom endpoints: new folders load without a restart', function () {
  this.timeout(20_000);
  let root: string;
  let s: TestServer;
  let a: TestAccount;
  before(async () => {
    root = customersRoot();
    writeEndpoint(root, 'acme', 'leads');
    s = await startTestServer({ CUSTOMERS_DIR: root });
    a = await s.account({ tier: 'CUSTOM' });
    await s.accounts.update(a.scriptId, { customer: 'acme' });
  });
  after(async () => {
    await s.close();
    rmSync(root, { recursive: true, force: true });
  });
  const post = (name: string) => s.post(`/service/custom/${name}`, { n: 1 }, { account: a, query: `id=${a.scriptId}&env=test` });

  it('a folder added while the server runs answers within a few seconds', async () => {
    expect((await post('orders')).status).to.equal(404);
    writeEndpoint(root, 'acme', 'orders');
    expect(await waitFor(async () => (await post('orders')).status === 200, 8_000), 'the new endpoint answers').to.equal(true);
  });

  it('a broken new folder is skipped, the rest keeps serving, and it loads once fixed', async () => {
    const dir = writeEndpoint(root, 'acme', 'broken', { handler: 'export default 42;' });
    expect(await s.running.endpoints.scan(), 'a scan sees it and refuses it').to.equal(0);
    expect((await post('broken')).status).to.equal(404);
    expect((await post('leads')).status).to.equal(200);
    writeFileSync(join(dir, 'handler.ts'), 'export default () => ({ events: [], messages: ["fixed"], recordsProcessed: 1 });\n');
    expect(await waitFor(async () => (await s.running.endpoints.scan()) === 1 || (await post('broken')).status === 200, 8_000)).to.equal(true);
    const last = await post('broken');
    expect(last.status, last.text).to.equal(200);
  });
});
