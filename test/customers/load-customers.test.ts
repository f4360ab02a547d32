// The custom endpoint loader: the demo customer loads; every kind of broken folder stops
// the load with the folder's path and the reason (the CLI's check); the server logs such a
// folder and skips it, serving every other endpoint.
import { expect } from 'chai';
import { mkdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { listEndpoints, loadCustomers } from '../../src/customers/load-customers.ts';
import { CustomerLoadError } from '../../src/customers/load-endpoint.ts';
import { createLogger } from '../../src/logger.ts';
import { customersRoot, customersWithScaffold, SHIPPED_CUSTOMERS, writeEndpoint, type EndpointFiles } from './fixtures.ts';
import { startTestServer } from '../helpers/test-server.ts';

describe('custom endpoints: loader', () => {
  let root: string;
  beforeEach(() => {
    root = customersRoot();
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('loads the four demo endpoints with their auth, beside an endpoint an operator has added', async () => {
    rmSync(root, { recursive: true, force: true });
    root = await customersWithScaffold();
    const eps = listEndpoints(await loadCustomers(root)).map((e) => [e.customer, e.name, e.auth.types]);
    expect(eps.filter(([customer]) => SHIPPED_CUSTOMERS.includes(customer as string))).to.deep.equal([
      ['demo', 'order-sync', ['api_key']],
      ['demo', 'patient-interaction', ['ip_allow', 'jwt']],
      ['demo', 'supply-chain-event', []],
      ['demo', 'transaction-analytics', ['hmac']],
    ]);
    expect(eps).to.deep.include(['acme', 'lead-sync', []]);
  });

  it('a missing directory loads nothing; a new endpoint is one new folder', async () => {
    expect((await loadCustomers(join(root, 'nope'))).size).to.equal(0);
    writeEndpoint(root, 'acme', 'leads');
    const reg = await loadCustomers(root);
    expect(reg.get('acme')!.get('leads')!.validateBody({ n: 2 })).to.deep.equal([]);
  });

  const broken: [string, EndpointFiles | ((dir: string) => void), RegExp][] = [
    ['schema.json that is not JSON', { schema: '{ "type": ' }, /schema\.json is not valid JSON/],
    ['a schema that does not compile', { schema: { type: 'object', properties: { n: { type: 'integer', minimum: 'one' } } } }, /schema\.json does not compile/],
    ['a schema with an unknown keyword', { schema: { type: 'object', properties: { n: { type: 'integer', mininum: 1 } } } }, /schema\.json does not compile: strict mode: unknown keyword: "mininum"/],
    ['a schema whose body is not an object', { schema: { type: 'array' } }, /"type": "object"/],
    ['endpoint.json without a description', { config: {} }, /endpoint\.json: must have required property 'description'/],
    ['endpoint.json with an unknown key', { config: { description: 'x', ratelimit: {} } }, /endpoint\.json: unknown key "ratelimit"/],
    ['an unknown auth type', { config: { description: 'x', auth: [{ type: 'oauth' }] } }, /auth\.0: type must be one of api_key, jwt, hmac, ip_allow/],
    ['api_key with both hashes and a variable', { config: { description: 'x', auth: [{ type: 'api_key', key_sha256: ['a'.repeat(64)], key_env: 'K' }] } }, /give exactly one of key_sha256 and key_env/],
    ['api_key with a hash that is not SHA-256 hex', { config: { description: 'x', auth: [{ type: 'api_key', key_sha256: ['plaintext-key'] }] } }, /key_sha256\.0: must match pattern/],
    ['jwt RS256 with a secret', { config: { description: 'x', auth: [{ type: 'jwt', algorithm: 'RS256', issuer: 'i', audience: 'a', secret: 's'.repeat(40) }] } }, /RS256 needs exactly one of public_key and public_key_env; auth\.0: secret does not apply to RS256/],
    ['jwt without audience', { config: { description: 'x', auth: [{ type: 'jwt', algorithm: 'HS256', issuer: 'i', secret: 's'.repeat(40) }] } }, /must have required property 'audience'/],
    ['a short HS256 secret', { config: { description: 'x', auth: [{ type: 'jwt', algorithm: 'HS256', issuer: 'i', audience: 'a', secret: 'short' }] } }, /secret: must NOT have fewer than 32 characters/],
    ['an RS256 key that is not a PEM', { config: { description: 'x', auth: [{ type: 'jwt', algorithm: 'RS256', issuer: 'i', audience: 'a', public_key: 'nope' }] } }, /auth\.0 \(jwt\): the RS256 public key is not a PEM SPKI RSA key/],
    ['a variable that is not set', { config: { description: 'x', auth: [{ type: 'hmac', secret_env: 'TL_TEST_UNSET_VARIABLE' }] } }, /auth\.0 \(hmac\): the environment variable TL_TEST_UNSET_VARIABLE is not set/],
    ['a bad CIDR', { config: { description: 'x', auth: [{ type: 'ip_allow', cidrs: ['10.0.0.0/40'] }] } }, /auth\.0 \(ip_allow\): "10\.0\.0\.0\/40" has a prefix longer than 32 bits/],
    ['a mechanism listed twice', { config: { description: 'x', auth: [{ type: 'ip_allow', cidrs: ['::1'] }, { type: 'ip_allow', cidrs: ['::1'] }] } }, /ip_allow is listed twice/],
    ['a rate limit of zero', { config: { description: 'x', rate_limit: { test: { per_minute: 0 } } } }, /rate_limit\.test\.per_minute: must be >= 1/],
    ['example.json failing the schema', { example: { n: 0 } }, /example\.json does not pass schema\.json: n must be a whole number from 1 to 99/],
    ['a handler without a default export', { handler: 'export const handler = () => null;' }, /handler\.ts must default-export a function/],
    ['a handler with a syntax error', { handler: 'export default (' }, /handler\.ts failed to load/],
    ['no README.md', { readme: null }, /missing README\.md/],
    ['no example.json', (dir) => unlinkSync(join(dir, 'example.json')), /missing example\.json/],
  ];
  for (const [what, change, reason] of broken) {
    it(`refuses ${what}, naming the folder`, async () => {
      const dir = typeof change === 'function' ? writeEndpoint(root, 'acme', 'broken') : writeEndpoint(root, 'acme', 'broken', change);
      if (typeof change === 'function') change(dir);
      const err = await loadCustomers(root).then(() => null, (e: unknown) => e);
      expect(err).to.be.instanceOf(CustomerLoadError);
      expect((err as CustomerLoadError).folder).to.equal(dir);
      expect((err as Error).message).to.match(new RegExp(`^custom endpoint ${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `));
      expect((err as Error).message).to.match(reason);
    });
  }

  it('refuses bad folder names and a customer without endpoints/', async () => {
    mkdirSync(join(root, 'Acme'));
    let err = await loadCustomers(root).then(() => null, (e: Error) => e);
    expect(err?.message).to.equal(`custom endpoint ${join(root, 'Acme')}: the customer folder name must be a slug of lowercase letters, digits and dashes`);
    rmSync(join(root, 'Acme'), { recursive: true });
    mkdirSync(join(root, 'acme'));
    writeFileSync(join(root, 'acme', 'README.md'), '# acme');
    err = await loadCustomers(root).then(() => null, (e: Error) => e);
    expect(err?.message).to.equal(`custom endpoint ${join(root, 'acme')}: has no endpoints/ folder`);
    writeEndpoint(root, 'acme', 'Bad_Name');
    err = await loadCustomers(root).then(() => null, (e: Error) => e);
    expect(err?.message).to.match(/Bad_Name: the folder name must be lowercase letters, digits and dashes$/);
  });

  it('a broken folder at start is logged and skipped: it answers 404 ENDPOINT_NOT_FOUND, every other endpoint serves', async () => {
    writeEndpoint(root, 'acme', 'leads');
    const badExample = writeEndpoint(root, 'acme', 'broken', { example: { n: 'x' } });
    const badHandler = writeEndpoint(root, 'acme', 'broken-handler', { handler: 'export default (' });
    writeEndpoint(root, 'zeta', 'orders');
    mkdirSync(join(root, 'Not_A_Slug'));
    const logged: { level: number; folder?: string; err?: string; msg: string }[] = [];
    const logger = createLogger('warn', { write: (line: string) => void logged.push(JSON.parse(line)) });
    const s = await startTestServer({ CUSTOMERS_DIR: root }, { logger });
    try {
      const a = await s.account({ tier: 'CUSTOM' });
      await s.accounts.update(a.scriptId, { customer: 'acme' });
      const post = (name: string) => s.post(`/service/custom/${name}`, { n: 1 }, { account: a, query: `id=${a.scriptId}&env=test` });
      expect((await post('leads')).status).to.equal(200);
      for (const name of ['broken', 'broken-handler']) {
        const r = await post(name);
        expect(r.status).to.equal(404);
        expect(r.body.error_code).to.equal('ENDPOINT_NOT_FOUND');
      }
      // The shipped customers load first; CUSTOMERS_DIR adds to them.
      expect([...s.running.customers.keys()].sort()).to.deep.equal(['acme', ...SHIPPED_CUSTOMERS, 'zeta'].sort());
      const skipped = logged.filter((l) => l.msg.includes('is skipped'));
      expect(skipped.map((l) => l.folder).sort()).to.deep.equal([join(root, 'Not_A_Slug'), badExample, badHandler].sort());
      expect(skipped.find((l) => l.folder === badExample)?.err).to.include('example.json does not pass schema.json');
      expect(skipped.every((l) => l.level === 50), 'logged as errors').to.equal(true);
    } finally {
      await s.close();
    }
  });
});
