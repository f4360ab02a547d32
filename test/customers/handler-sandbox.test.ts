// Custom handlers run in worker threads with a hard time limit and a memory limit: a
// handler that loops forever or allocates without bound costs its own request a 500,
// while the same server keeps answering health checks and other endpoints, and the pool
// keeps serving afterwards.
import { expect } from 'chai';
import { rmSync } from 'node:fs';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/test-server.ts';
import { customersRoot, writeEndpoint } from './fixtures.ts';

describe('custom endpoints: handlers are sandboxed', function () {
  this.timeout(30_000);
  let root: string;
  let s: TestServer;
  let a: TestAccount;
  before(async () => {
    root = customersRoot();
    writeEndpoint(root, 'acme', 'spins', { handler: 'export default () => { while (true) {} };' });
    writeEndpoint(root, 'acme', 'hoards', {
      handler: 'export default () => { const keep: string[] = []; for (;;) keep.push("x".repeat(1024) + keep.length); };',
    });
    writeEndpoint(root, 'acme', 'leads');
    s = await startTestServer({ CUSTOMERS_DIR: root, CUSTOM_HANDLER_TIMEOUT_MS: '1500', CUSTOM_HANDLER_MEMORY_MB: '32' });
    a = await s.account({ tier: 'CUSTOM' });
    await s.accounts.update(a.scriptId, { customer: 'acme' });
    // Warm the pool so the timings below are the handlers', not a thread's start-up.
    expect((await post('leads', 1)).status).to.equal(200);
  });
  after(async () => {
    await s.close();
    rmSync(root, { recursive: true, force: true });
  });
  const post = (name: string, n: number) => s.post(`/service/custom/${name}`, { n }, { account: a, query: `id=${a.scriptId}&env=production` });

  it('an endless loop is stopped at the time limit with a 500; meanwhile /healthz, endpoint 1 and other handlers answer', async () => {
    const started = Date.now();
    const spinning = post('spins', 1);
    const during: number[] = [];
    // While the loop runs, the main thread serves others.
    during.push((await fetch(`${s.url}/healthz`)).status);
    during.push((await s.post(INTAKE_PATHS.event, { event: { name: 'lead_created', id: 'L-SIDE' }, context: { environment: 'prod', data_source: 'crm' } },
      { account: await s.account() })).status);
    during.push((await post('leads', 2)).status);
    const r = await spinning;
    const took = Date.now() - started;
    expect(during).to.deep.equal([200, 200, 200]);
    expect(r.status).to.equal(500);
    expect(r.body).to.include({ result: 'error', error_code: 'INTERNAL_ERROR' });
    expect(took, 'stopped at the limit, not left running').to.be.below(10_000);
    expect((await post('leads', 3)).status, 'the pool serves after the stop').to.equal(200);
  });

  it('a handler that allocates without bound is stopped by the memory limit; the process lives on', async () => {
    const r = await post('hoards', 1);
    expect(r.status).to.equal(500);
    expect(r.body.error_code).to.equal('INTERNAL_ERROR');
    expect((await fetch(`${s.url}/healthz`)).status).to.equal(200);
    expect((await post('leads', 4)).status).to.equal(200);
  });
});
