// The retry policy on its own: schedule, jitter bounds, Retry-After clamp, the overload
// minimum, exhaustion, and the classification of transport errors and replies.
import { expect } from 'chai';
import {
  createRetryPolicy, DEFAULT_SCHEDULE_MS, OVERLOAD_MIN_MS, parseRetryAfter, RETRY_AFTER_MAX_MS, verdictOf, type Verdict,
} from '../../src/delivery/retry-policy.ts';
import type { SendResult } from '../../src/delivery/http-sender.ts';
import type { Classification, PlatformResponse } from '../../src/destinations/types.ts';

const NOW = 1_700_000_000_000;
const H = 3_600_000;
const retry = (over: Partial<Extract<Verdict, { outcome: 'retryable' }>> = {}): Verdict =>
  ({ outcome: 'retryable', message: 'HTTP 500', overload: false, ...over });
const mid = () => 0.5; // no jitter
const delayOf = (d: ReturnType<ReturnType<typeof createRetryPolicy>['decide']>) => (d.status === 'pending' ? d.delayMs : NaN);

describe('delivery: retry policy', () => {
  it('documents a schedule of 10 s, 1 min, 5 min, 30 min, 1 h, 2 h, 4 h, 8 h, 8 h, 8 h: 11 attempts', () => {
    expect(DEFAULT_SCHEDULE_MS).to.deep.equal([10e3, 60e3, 300e3, 1800e3, H, 2 * H, 4 * H, 8 * H, 8 * H, 8 * H]);
    const policy = createRetryPolicy({ random: mid });
    expect(policy.maxAttempts).to.equal(11);
    const delays = DEFAULT_SCHEDULE_MS.map((_, i) => delayOf(policy.decide(i + 1, retry(), NOW)));
    expect(delays).to.deep.equal([...DEFAULT_SCHEDULE_MS]);
  });

  it('retries for more than 24 h even when every delay is jittered to its minimum', () => {
    for (const random of [() => 0, mid, () => 0.999999]) {
      const policy = createRetryPolicy({ random });
      let total = 0;
      for (let n = 1; n < policy.maxAttempts; n++) total += delayOf(policy.decide(n, retry(), NOW));
      expect(total, `random ${random()}`).to.be.greaterThan(24 * H);
      expect(policy.decide(policy.maxAttempts, retry(), NOW)).to.deep.equal({ status: 'dead' });
    }
  });

  it('keeps jitter within ±20 % of the scheduled delay', () => {
    const policy = (r: number) => createRetryPolicy({ random: () => r });
    expect(delayOf(policy(0).decide(4, retry(), NOW))).to.equal(1_800_000 * 0.8);
    expect(delayOf(policy(0.999999).decide(4, retry(), NOW))).to.be.closeTo(1_800_000 * 1.2, 5);
    const seen = new Set<number>();
    const random = createRetryPolicy();
    for (let i = 0; i < 500; i++) {
      const d = delayOf(random.decide(5, retry(), NOW));
      expect(d).to.be.within(0.8 * H, 1.2 * H);
      seen.add(d);
    }
    expect(seen.size, 'delays actually vary').to.be.greaterThan(100);
  });

  it('sets next_attempt_at from the injected clock', () => {
    const d = createRetryPolicy({ scheduleMs: [1_000], random: mid }).decide(1, retry(), NOW);
    expect(d).to.deep.equal({ status: 'pending', delayMs: 1_000, nextAttemptAt: NOW + 1_000 });
  });

  it('honours Retry-After up to a 1 h ceiling, never sooner than scheduled', () => {
    const policy = createRetryPolicy({ scheduleMs: [100_000], random: mid });
    expect(RETRY_AFTER_MAX_MS).to.equal(H);
    expect(delayOf(policy.decide(1, retry({ retryAfterMs: 120_000 }), NOW))).to.equal(120_000);
    expect(delayOf(policy.decide(1, retry({ retryAfterMs: 5_000 }), NOW)), 'never sooner than scheduled').to.equal(100_000);
    expect(delayOf(policy.decide(1, retry({ retryAfterMs: H }), NOW)), 'a 429 asking for an hour waits an hour').to.equal(H);
    expect(delayOf(policy.decide(1, retry({ retryAfterMs: 365 * 24 * H }), NOW)), 'capped at the ceiling').to.equal(H);
    const defaults = createRetryPolicy({ random: mid });
    expect(delayOf(defaults.decide(2, retry({ overload: true, retryAfterMs: H }), NOW)), 'second attempt, 1 min scheduled').to.equal(H);
    expect(delayOf(defaults.decide(8, retry({ retryAfterMs: H }), NOW)), 'a longer schedule wins').to.equal(8 * H);
  });

  it('gives up after at most ≈41 h 12 min even when every attempt asks for a long Retry-After', () => {
    const policy = createRetryPolicy({ random: () => 0.999999 });
    let total = 0;
    for (let n = 1; n < policy.maxAttempts; n++) total += delayOf(policy.decide(n, retry({ retryAfterMs: 365 * 24 * H }), NOW));
    expect(total).to.be.closeTo(41.2 * H, 60_000);
    const plain = createRetryPolicy({ random: () => 0.999999 });
    let nominalMax = 0;
    for (let n = 1; n < plain.maxAttempts; n++) nominalMax += delayOf(plain.decide(n, retry(), NOW));
    expect(nominalMax, 'without Retry-After: ≈37 h 55 min').to.be.closeTo((37 + 55 / 60) * H, 60_000);
  });

  it('waits at least 60 s after a timeout or a 429, whatever the schedule or Retry-After says', () => {
    const policy = createRetryPolicy({ scheduleMs: [10_000, 10 * 60_000], random: mid });
    expect(delayOf(policy.decide(1, retry({ overload: true }), NOW))).to.equal(OVERLOAD_MIN_MS);
    expect(delayOf(policy.decide(1, retry({ overload: true, retryAfterMs: 1_000 }), NOW))).to.equal(OVERLOAD_MIN_MS);
    expect(delayOf(policy.decide(2, retry({ overload: true }), NOW)), 'longer schedule wins').to.equal(10 * 60_000);
    expect(delayOf(createRetryPolicy({ scheduleMs: [5], overloadMinMs: 20, random: mid }).decide(1, retry({ overload: true }), NOW)))
      .to.equal(20);
  });

  it('success → delivered, permanent → failed at any attempt, retryable past the schedule → dead', () => {
    const policy = createRetryPolicy({ scheduleMs: [1, 1], random: mid });
    expect(policy.decide(3, { outcome: 'success', message: 'ok' }, NOW)).to.deep.equal({ status: 'delivered' });
    expect(policy.decide(1, { outcome: 'permanent', message: 'HTTP 400' }, NOW)).to.deep.equal({ status: 'failed' });
    expect(policy.decide(2, retry(), NOW).status).to.equal('pending');
    expect(policy.decide(3, retry(), NOW)).to.deep.equal({ status: 'dead' });
  });

  it('parses Retry-After as delta-seconds or an HTTP date and ignores garbage', () => {
    expect(parseRetryAfter({ 'retry-after': '120' }, NOW)).to.equal(120_000);
    expect(parseRetryAfter({ 'Retry-After': ' 7 ' }, NOW)).to.equal(7_000);
    expect(parseRetryAfter({ 'retry-after': new Date(NOW + 90_000).toUTCString() }, NOW)).to.equal(90_000);
    expect(parseRetryAfter({ 'retry-after': new Date(NOW - 90_000).toUTCString() }, NOW)).to.equal(0);
    for (const garbage of ['soon', '-5', '1.5e3', '', 'Thu, 99 Foo 2024 00:00:00 GMT']) {
      expect(parseRetryAfter({ 'retry-after': garbage }, NOW), garbage).to.equal(undefined);
    }
    expect(parseRetryAfter({}, NOW)).to.equal(undefined);
  });

  describe('classification', () => {
    const error = (errorClass: Extract<SendResult, { kind: 'error' }>['errorClass']): SendResult =>
      ({ kind: 'error', errorClass, message: 'x', latencyMs: 1 });
    const reply = (status: number, headers: Record<string, string> = {}, body = ''): SendResult =>
      ({ kind: 'response', response: { status, headers, body }, latencyMs: 1 });
    const plugin = (c: Classification) => () => c;

    it('transport errors: timeout retried with the overload minimum, connection errors retried, blocked final', () => {
      const never = () => { throw new Error('not called'); };
      const table: [Parameters<typeof error>[0], string, boolean][] = [
        ['timeout', 'retryable', true], ['connect', 'retryable', false], ['dns', 'retryable', false], ['tls', 'retryable', false],
        ['reset', 'retryable', false], ['other', 'retryable', false], ['blocked', 'permanent', false],
      ];
      for (const [cls, outcome, overload] of table) {
        const v = verdictOf(error(cls), never, NOW);
        expect(v.outcome, cls).to.equal(outcome);
        if (v.outcome === 'retryable') expect(v.overload, cls).to.equal(overload);
      }
    });

    it('replies are judged by the plugin; its retryAfterMs wins, else the header (dates too) is read', () => {
      expect(verdictOf(reply(200), plugin({ outcome: 'success' }), NOW)).to.deep.equal({ outcome: 'success', message: 'HTTP 200' });
      expect(verdictOf(reply(200), plugin({ outcome: 'permanent', message: 'code 40002' }), NOW))
        .to.deep.equal({ outcome: 'permanent', message: 'code 40002' });
      expect(verdictOf(reply(503, { 'retry-after': '9' }), plugin({ outcome: 'retryable', message: 'm', retryAfterMs: 30_000 }), NOW))
        .to.deep.equal({ outcome: 'retryable', message: 'm', overload: false, retryAfterMs: 30_000 });
      const date = new Date(NOW + 45_000).toUTCString();
      expect(verdictOf(reply(503, { 'retry-after': date }), plugin({ outcome: 'retryable', message: 'm' }), NOW))
        .to.deep.equal({ outcome: 'retryable', message: 'm', overload: false, retryAfterMs: 45_000 });
      expect(verdictOf(reply(429), plugin({ outcome: 'retryable', message: 'm' }), NOW))
        .to.deep.equal({ outcome: 'retryable', message: 'm', overload: true });
    });

    it('a plugin that throws is judged by status alone', () => {
      const boom = (_: PlatformResponse): Classification => { throw new Error('bug'); };
      expect(verdictOf(reply(204), boom, NOW).outcome).to.equal('success');
      expect(verdictOf(reply(502), boom, NOW).outcome).to.equal('retryable');
      expect(verdictOf(reply(400), boom, NOW).outcome).to.equal('permanent');
    });
  });
});
