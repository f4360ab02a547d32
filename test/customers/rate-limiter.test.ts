// The token bucket on an injected clock: burst, refill, Retry-After, independent keys.
import { expect } from 'chai';
import { createRateLimiter, TEST_RATE_DEFAULT } from '../../src/customers/rate-limiter.ts';

describe('custom endpoints: rate limiter', () => {
  let t: number;
  const clock = () => t;
  beforeEach(() => {
    t = 1_700_000_000_000;
  });

  it('allows the burst at once, then refuses with the seconds until the next token', () => {
    const l = createRateLimiter({ now: clock });
    const limit = { perMinute: 60, burst: 3 };
    for (let i = 0; i < 3; i++) expect(l.take('k', limit)).to.deep.equal({ ok: true });
    expect(l.take('k', limit)).to.deep.equal({ ok: false, retryAfterSeconds: 1 });
    t += 999;
    expect(l.take('k', limit).ok).to.equal(false);
    t += 1;
    expect(l.take('k', limit)).to.deep.equal({ ok: true });
    expect(l.take('k', limit).ok).to.equal(false);
  });

  it('resets: after a quiet spell the bucket is full again, never fuller than the burst', () => {
    const l = createRateLimiter({ now: clock });
    const limit = { perMinute: 60, burst: 3 };
    for (let i = 0; i < 3; i++) l.take('k', limit);
    t += 60 * 60_000;
    for (let i = 0; i < 3; i++) expect(l.take('k', limit).ok).to.equal(true);
    expect(l.take('k', limit).ok).to.equal(false);
  });

  it('Retry-After grows with slow refill rates', () => {
    const l = createRateLimiter({ now: clock });
    const limit = { perMinute: 2, burst: 1 };
    expect(l.take('k', limit).ok).to.equal(true);
    expect(l.take('k', limit)).to.deep.equal({ ok: false, retryAfterSeconds: 30 });
    t += 10_000;
    expect(l.take('k', limit)).to.deep.equal({ ok: false, retryAfterSeconds: 20 });
  });

  it('the test default lets 1,000 requests through in a minute, and not the 1,001st at once', () => {
    const l = createRateLimiter({ now: clock });
    let ok = 0;
    for (let i = 0; i < 1001; i++) if (l.take('acct/ep/test', TEST_RATE_DEFAULT).ok) ok++;
    expect(ok).to.equal(1000);
    t += 60;
    expect(l.take('acct/ep/test', TEST_RATE_DEFAULT).ok, '60 ms refill one token').to.equal(true);
  });

  it('keys are independent; a clock going backwards never adds tokens', () => {
    const l = createRateLimiter({ now: clock });
    const limit = { perMinute: 60, burst: 1 };
    expect(l.take('a', limit).ok).to.equal(true);
    expect(l.take('b', limit).ok).to.equal(true);
    expect(l.take('a', limit).ok).to.equal(false);
    t -= 5_000;
    expect(l.take('a', limit).ok).to.equal(false);
  });
});
