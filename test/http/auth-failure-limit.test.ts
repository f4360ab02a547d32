// The limit before authentication: failed authentications from one address are counted;
// past AUTH_FAILURES_PER_MINUTE the address gets 429 RATE_LIMITED + Retry-After before any
// lookup, on the standard intake and on custom endpoints (their extra checks count too).
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { createAuthFailureLimiter } from '../../src/http/auth-failure-limit.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { customersRoot, writeEndpoint } from '../customers/fixtures.ts';
import { checkout } from '../delivery/delivery-fixture.ts';

describe('http: failed authentications per client address', function () {
  this.timeout(20_000);

  it('the limiter refills continuously, forgets full buckets and keeps at most maxKeys addresses', () => {
    let t = 0;
    const l = createAuthFailureLimiter({ perMinute: 2, now: () => t, maxKeys: 3 });
    l.fail('a');
    expect(l.blockedFor('a')).to.equal(0);
    l.fail('a');
    expect(l.blockedFor('a')).to.equal(30);
    t += 30_000;
    expect(l.blockedFor('a')).to.equal(0);
    t += 30_000;
    expect(l.blockedFor('a')).to.equal(0);
    expect(l.size, 'a full bucket is forgotten').to.equal(0);
    for (const ip of ['1', '2', '3', '4', '5']) l.fail(ip);
    expect(l.size).to.equal(3);
  });

  it('a blocked address passes a real account only while that account has not failed from it', () => {
    let t = 0;
    const l = createAuthFailureLimiter({ perMinute: 2, now: () => t });
    l.fail('a');
    l.fail('a', 'REALID01');
    expect(l.blockedFor('a'), 'address').to.equal(30);
    expect(l.blockedFor('a', 'REALID02'), 'a real account that did not fail here').to.equal(0);
    expect(l.blockedFor('a', 'REALID01'), 'the real account that failed here').to.equal(30);
    expect(l.blockedFor('b', 'REALID01'), 'another address').to.equal(0);
    t += 30_000;
    expect(l.blockedFor('a', 'REALID01')).to.equal(0);
  });

  /** A server allowing `limit` failures a minute, with a custom endpoint guarded by an API key. */
  function useKeyedServer(limit: number): { readonly s: TestApp } {
    let s: TestApp | undefined;
    let root: string;
    before(async () => {
      root = customersRoot();
      const sha = createHash('sha256').update('right-key-0123456789').digest('hex');
      writeEndpoint(root, 'sec', 'keyed', { config: { description: 'keyed', auth: [{ type: 'api_key', header: 'X-Partner-Key', key_sha256: [sha] }] } });
      s = await startTestApp({ AUTH_FAILURES_PER_MINUTE: String(limit), CUSTOMERS_DIR: root });
    });
    after(async () => {
      await s?.close();
      rmSync(root, { recursive: true, force: true });
    });
    return { get s() { return s!; } };
  }

  describe('over HTTP', () => {
    const h = useKeyedServer(5);

    it('random script ids: five 401s, then 429 RATE_LIMITED with Retry-After; a just-used account still gets through', async () => {
      const good = await h.s.account();
      expect((await h.s.post(INTAKE_PATHS.event, checkout('ORD-A1'), { account: good })).status).to.equal(200);
      const statuses: number[] = [];
      let last;
      for (let i = 0; i < 8; i++) {
        last = await h.s.post(INTAKE_PATHS.event, checkout(`X-${i}`), { query: `id=ZZZZZZZ${i}`, headers: { 'x-service-access-token': 'tlk_nope' } });
        statuses.push(last.status);
      }
      expect(statuses).to.deep.equal([401, 401, 401, 401, 401, 429, 429, 429]);
      expect(last!.body).to.include({ level: 2 });
      expect(last!.text).to.contain('RATE_LIMITED');
      expect(Number(last!.headers.get('retry-after'))).to.be.within(1, 12);
      expect((await h.s.post(INTAKE_PATHS.event, checkout('ORD-A2'), { account: good })).status, 'cached account, right token').to.equal(200);
      const stranger = await h.s.account();
      expect((await h.s.post(INTAKE_PATHS.event, checkout('ORD-S1'), { account: stranger })).status, 'an account not seen lately waits too').to.equal(429);
    });
  });

  describe('wrong tokens for a real script id', () => {
    const h = useKeyedServer(5);

    it('are blocked after the same count as unknown ids, whatever the spelling of the id; other accounts keep going', async () => {
      const victim = await h.s.account();
      const bystander = await h.s.account();
      // Both accounts are in the authenticator's cache, as a real id under attack is.
      expect((await h.s.post(INTAKE_PATHS.event, checkout('ORD-V1'), { account: victim })).status).to.equal(200);
      expect((await h.s.post(INTAKE_PATHS.event, checkout('ORD-B1'), { account: bystander })).status).to.equal(200);
      const wrong = { 'x-service-access-token': 'tlk_wrong-token-guess-000000000000' };
      const id = victim.scriptId;
      // The attacker's spellings: the id itself, percent-encoded, lower case, padded, given twice.
      const queries = [
        `id=${id}`, `id=%${id.charCodeAt(0).toString(16)}${id.slice(1)}`, `id=${id.toLowerCase()}`, `id=%20${id}`, `id=${id}%20`,
        `id=${id}&id=${id}`, `id=${id}`, `id=${id}`, `id=${id}`, `id=${id}`, `id=${id}`, `id=${id}`,
      ];
      const statuses: number[] = [];
      for (const query of queries) statuses.push((await h.s.post(INTAKE_PATHS.event, checkout('ORD-X'), { query, headers: wrong })).status);
      expect(statuses.slice(0, 5), statuses.join(',')).to.deep.equal([401, 401, 401, 401, 401]);
      expect(statuses.slice(5), statuses.join(',')).to.deep.equal(Array(7).fill(429));
      // The batch path shares the limit.
      expect((await h.s.post('/webhooks/service/events', { batch: [checkout('ORD-X')] }, { query: `id=${id}`, headers: wrong })).status).to.equal(429);
      // The account under attack waits with the address (fail closed); an account that did not fail here does not.
      expect((await h.s.post(INTAKE_PATHS.event, checkout('ORD-V2'), { account: victim })).status).to.equal(429);
      expect((await h.s.post(INTAKE_PATHS.event, checkout('ORD-B2'), { account: bystander })).status, 'a just-used account that did not fail').to.equal(200);
    });
  });

  describe('custom endpoint extra checks', () => {
    const h = useKeyedServer(3);

    it('wrong partner keys count against the address like wrong tokens', async () => {
      const a = await h.s.account({ tier: 'CUSTOM' });
      await h.s.accounts.update(a.scriptId, { customer: 'sec' });
      const post = (key: string) => h.s.post('/service/custom/keyed', { n: 1 }, { account: a, query: `id=${a.scriptId}&env=test`, headers: { 'x-partner-key': key } });
      expect((await post('right-key-0123456789')).status).to.equal(200);
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await post(`wrong-${i}`)).status);
      expect(statuses, 'a cached account does not skip the limit on the endpoint\'s own checks').to.deep.equal([401, 401, 401, 429]);
      const other = await h.s.account({ tier: 'CUSTOM' });
      await h.s.accounts.update(other.scriptId, { customer: 'sec' });
      const r = await h.s.post('/service/custom/keyed', { n: 1 }, { account: other, query: `id=${other.scriptId}&env=test`, headers: { 'x-partner-key': 'right-key-0123456789' } });
      expect(r.status, r.text).to.equal(429);
      expect(r.body.error_code).to.equal('RATE_LIMITED');
    });
  });
});
