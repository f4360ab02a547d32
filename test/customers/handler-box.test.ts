// What a custom handler is given, beyond the time and heap limits of handler-sandbox.test.ts:
// an environment without the service's variables, a limit on memory V8's heap does not count
// (Buffers), and its module's top-level code run only in a handler thread, never on the
// thread that serves every tenant.
import { expect } from 'chai';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadCustomers } from '../../src/customers/load-customers.ts';
import { startTestServer, tempDir, type TestAccount, type TestServer } from '../helpers/test-server.ts';
import { customersRoot, writeEndpoint } from './fixtures.ts';

/** A handler answering with `expr` as its one message (JSON), so a test can read what the handler saw. */
const reporting = (expr: string, prelude = '') => `${prelude}
export default () => ({ events: [], messages: [JSON.stringify(${expr})], recordsProcessed: 1 });
`;

/** Records, from handler.ts's top-level code, which thread ran it. */
const markerHandler = (marker: string) => reporting('"ok"', `
import { appendFileSync } from 'node:fs';
import { isMainThread, threadId } from 'node:worker_threads';
appendFileSync(${JSON.stringify(marker)}, JSON.stringify({ isMainThread, threadId }) + '\\n');`);

const SECRET_VARS = ['ADMIN_TOKENS', 'ADMIN_TOKEN', 'DATABASE_URL', 'TRACKLANE_TEST_HANDLER_SECRET'];

describe('custom endpoints: what a handler is given', function () {
  this.timeout(60_000);
  let root: string;
  let marks: string;
  let s: TestServer;
  let a: TestAccount;
  const saved = new Map<string, string | undefined>();
  before(async () => {
    root = customersRoot();
    marks = join(tempDir('tl-marks-'), 'marks.ndjson');
    // The service's secrets, as an operator sets them in its environment.
    for (const k of SECRET_VARS) saved.set(k, process.env[k]);
    process.env.ADMIN_TOKENS = 'ops:handler-must-not-see-this-token';
    process.env.ADMIN_TOKEN = 'handler-must-not-see-this-either';
    process.env.DATABASE_URL = 'postgres://user:secret@db/tracklane';
    process.env.TRACKLANE_TEST_HANDLER_SECRET = 'x';
    writeEndpoint(root, 'acme', 'env', { handler: reporting('{ tokens: process.env.ADMIN_TOKENS ?? null, keys: Object.keys(process.env).sort() }') });
    // 40 MiB of Buffers kept in a module-level list on n=1, under a 32 MiB limit; other calls allocate nothing.
    writeEndpoint(root, 'acme', 'hoards-buffers', {
      handler: `const keep: Buffer[] = [];
export default (body: { n: number }) => {
  if (body.n === 1) keep.push(Buffer.alloc(40 * 1024 * 1024, 1));
  return { events: [], messages: ['kept ' + keep.length], recordsProcessed: 1 };
};
`,
    });
    writeEndpoint(root, 'acme', 'marks', { handler: markerHandler(marks) });
    s = await startTestServer({ CUSTOMERS_DIR: root, CUSTOM_HANDLER_MEMORY_MB: '32' });
    a = await s.account({ tier: 'CUSTOM' });
    await s.accounts.update(a.scriptId, { customer: 'acme' });
  });
  after(async () => {
    await s?.close();
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    rmSync(root, { recursive: true, force: true });
    rmSync(join(marks, '..'), { recursive: true, force: true });
  });
  const post = (name: string, n: number) => s.post(`/service/custom/${name}`, { n }, { account: a, query: `id=${a.scriptId}&env=production` });

  it("a handler's process.env holds none of the service's variables: only NODE_ENV and TZ when set", async () => {
    const r = await post('env', 1);
    expect(r.status).to.equal(200);
    const seen = JSON.parse(r.body.messages[0]) as { tokens: string | null; keys: string[] };
    expect(seen.tokens).to.equal(null);
    expect(seen.keys.filter((k) => !['NODE_ENV', 'TZ'].includes(k))).to.deep.equal([]);
  });

  it('a handler keeping Buffers beyond the memory limit is stopped with a 500, and the next call works', async () => {
    const r = await post('hoards-buffers', 1);
    expect(r.status).to.equal(500);
    expect(r.body).to.include({ result: 'error', error_code: 'INTERNAL_ERROR' });
    expect(JSON.stringify(r.body), 'the body reveals nothing of the handler').to.not.include('MiB');
    const next = await post('hoards-buffers', 2);
    expect(next.status).to.equal(200);
    expect((await post('env', 2)).status).to.equal(200);
  });

  it("a handler module's top-level code runs in handler threads only: not on the main thread at start, load or call", async () => {
    expect((await post('marks', 1)).status).to.equal(200);
    const runs = readFileSync(marks, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { isMainThread: boolean; threadId: number });
    expect(runs.length).to.be.at.least(1);
    expect(runs.filter((r) => r.isMainThread || r.threadId === 0)).to.deep.equal([]);
  });

  it('the loader the CLI uses loads handler modules in a thread of its own too', async () => {
    rmSync(marks, { force: true });
    const registry = await loadCustomers(root);
    expect(registry.get('acme')!.has('marks')).to.equal(true);
    const runs = readFileSync(marks, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { isMainThread: boolean });
    expect(runs.map((r) => r.isMainThread)).to.deep.equal([false]);
  });
});
