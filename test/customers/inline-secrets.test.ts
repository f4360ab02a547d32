// Inline secrets in endpoint.json are for the public demo only: anywhere else loading warns
// (logged at start) and says to use secret_env; the demo's own are expected and documented.
import { expect } from 'chai';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadCustomers, listEndpoints } from '../../src/customers/load-customers.ts';
import { loadEndpoint } from '../../src/customers/load-endpoint.ts';
import { ROOT } from '../helpers/spawn-server.ts';
import { customersRoot, writeEndpoint } from './fixtures.ts';
import { shippedFolders } from '../helpers/shipped-folders.ts';

const SECRET = 'hmac-test-secret-at-least-32-bytes-long!!';

describe('custom endpoints: inline secrets', () => {
  let root: string;
  before(() => {
    root = customersRoot();
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('outside the demo, an inline secret loads with a warning naming secret_env; secret_env gives none', async () => {
    const inline = writeEndpoint(root, 'acme', 'signed', { config: { description: 'x', auth: [{ type: 'hmac', secret: SECRET }] } });
    const ep = await loadEndpoint(inline, 'acme', 'signed');
    expect(ep.warnings).to.deep.equal(['endpoint.json auth[0] (hmac) has its secret inline; put it in an environment variable and name it with secret_env']);
    process.env.TL_TEST_INLINE_SECRET = SECRET;
    try {
      const env = writeEndpoint(root, 'acme', 'signed-env', { config: { description: 'x', auth: [{ type: 'hmac', secret_env: 'TL_TEST_INLINE_SECRET' }] } });
      expect((await loadEndpoint(env, 'acme', 'signed-env')).warnings).to.deep.equal([]);
    } finally {
      delete process.env.TL_TEST_INLINE_SECRET;
    }
  });

  it("the demo's inline secrets load without a warning, and the demo README says they are public", async () => {
    const registry = await loadCustomers(shippedFolders().customersDir);
    for (const ep of listEndpoints(registry).filter((e) => e.customer === 'demo')) expect(ep.warnings, ep.name).to.deep.equal([]);
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(join(ROOT, 'customers/demo/README.md'), 'utf8')).to.match(/public/i).and.match(/secret_env/);
  });
});
