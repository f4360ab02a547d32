// Per-account intake rate limit: 429 + Retry-After past the limit, other accounts unaffected.
import { expect } from 'chai';
import { createTokenBuckets } from '../../src/http/rate-limit.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';

const lead = { event: { name: 'lead_created', id: 'L-1' }, context: { environment: 'prod', data_source: 'crm' } };

describe('token buckets', () => {
  it('allows a burst of two seconds of rate, then one per 1/rate seconds', () => {
    let t = 0;
    const b = createTokenBuckets({ now: () => t });
    for (let i = 0; i < 20; i++) expect(b.take('a', 10)).to.equal(0);
    expect(b.take('a', 10)).to.equal(1);
    expect(b.take('b', 10)).to.equal(0);
    t += 100;
    expect(b.take('a', 10)).to.equal(0);
    expect(b.take('a', 10)).to.equal(1);
    expect(b.take('slow', 1)).to.equal(0);
    expect(b.take('slow', 1)).to.equal(0);
    expect(b.take('slow', 1)).to.equal(1);
  });

  it('takes many tokens at once for a batch, and lets an over-capacity batch through a full bucket into debt', () => {
    let t = 0;
    const b = createTokenBuckets({ now: () => t });
    expect(b.take('a', 10, 15)).to.equal(0); // 20 → 5
    expect(b.take('a', 10, 6)).to.equal(1); // 5 < 6: wait
    expect(b.take('a', 10, 5)).to.equal(0); // 5 → 0
    t += 2000; // full again (20)
    expect(b.take('a', 10, 50)).to.equal(0); // 20 → -30
    expect(b.take('a', 10, 1)).to.equal(4); // 31 tokens short at 10/s
    t += 3000;
    expect(b.take('a', 10, 1)).to.equal(1); // back to 0 tokens: still short of one
    t += 100;
    expect(b.take('a', 10, 1)).to.equal(0);
  });
});

describe('token buckets: work already done', () => {
  it('lets an over-capacity take through a bucket one token short of full (a batch after its request token)', () => {
    let t = 0;
    const b = createTokenBuckets({ now: () => t });
    expect(b.take('a', 10)).to.equal(0); // 20 → 19
    expect(b.take('a', 10, 49)).to.equal(0); // 19 → -30
    expect(b.take('a', 10)).to.equal(4);
    expect(b.take('b', 10, 2)).to.equal(0); // 20 → 18
    expect(b.take('b', 10, 49), 'two short of full').to.equal(1);
  });

  it('charge takes whatever the bucket holds and says whether it could afford it', () => {
    let t = 0;
    const b = createTokenBuckets({ now: () => t });
    expect(b.charge('a', 10, 5)).to.equal(0); // 20 → 15
    expect(b.charge('a', 10, 40)).to.equal(3); // 15 < 19: charged anyway, 15 → -25: 2.5 s of debt
    expect(b.take('a', 10, 0), 'in debt: even nothing waits').to.equal(3);
    t += 2500;
    expect(b.take('a', 10, 0)).to.equal(0);
  });

  it('a charge for the rest of what a request took part of is judged as the whole: a full bucket affords a body larger than itself', () => {
    // The clock stands still, as on a fast machine: the declared bytes were taken a moment ago.
    const b = createTokenBuckets({ now: () => 0 });
    expect(b.take('gz', 10, 2)).to.equal(0); // 20 → 18: the declared length
    expect(b.charge('gz', 10, 98, undefined, 2), 'full before the request: affordable').to.equal(0); // 18 → -80
    expect(b.take('gz', 10, 1), 'then in debt').to.equal(9);
    // A bucket not full before the request still cannot afford it.
    expect(b.take('part', 10, 5)).to.equal(0); // another request: 20 → 15
    expect(b.take('part', 10, 2)).to.equal(0); // 15 → 13
    expect(b.charge('part', 10, 98, undefined, 2)).to.be.above(0);
  });
});

describe('intake rate limit', () => {
  let s: TestApp;
  before(async () => {
    s = await startTestApp({ RATE_LIMIT_DEFAULT: '1000' });
  });
  after(() => s.close());

  it('answers 429 RATE_LIMITED with Retry-After over the account limit, stores nothing, and leaves other accounts alone', async () => {
    const noisy = await s.account();
    const quiet = await s.account();
    // 1 a second: one token refills in a second, not in the few ms a loaded machine may pause between two requests.
    await s.accounts.update(noisy.scriptId, { rateLimit: 1 });
    // The authenticator may serve the account as it was for up to 1 s, so send until the new limit bites.
    const statuses: number[] = [];
    const deadline = Date.now() + 3000;
    while (!statuses.includes(429) && Date.now() < deadline) {
      statuses.push((await s.post(INTAKE_PATHS.event, lead, { account: noisy })).status);
    }
    expect(statuses).to.include(429);
    const r = await s.post(INTAKE_PATHS.event, lead, { account: noisy });
    expect(r.status).to.equal(429);
    expect(Number(r.headers.get('retry-after'))).to.be.at.least(1);
    expect(r.body.errors[0]).to.match(/^RATE_LIMITED: /);
    const std = await s.post(INTAKE_PATHS.standard, lead, { account: noisy });
    expect(std.status).to.equal(429);
    expect(std.body.errors[0].code).to.equal('RATE_LIMITED');
    for (let i = 0; i < 20; i++) expect((await s.post(INTAKE_PATHS.event, lead, { account: quiet })).status).to.equal(200);
  });
});
