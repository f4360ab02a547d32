// Retry-After as every plugin reads it: whole seconds by default, fractions on request.
import { expect } from 'chai';
import { retryable, retryAfterMs } from '../../src/destinations/retry-after.ts';

describe('destinations: retry-after', () => {
  describe('retryAfterMs', () => {
    const cases: [string, Record<string, string>, number | undefined, number | undefined][] = [
      // what, headers, whole seconds only, with fractions
      ['no header', {}, undefined, undefined],
      ['whole seconds', { 'Retry-After': '30' }, 30_000, 30_000],
      ['any case of the name', { 'RETRY-AFTER': '7' }, 7_000, 7_000],
      ['spaces around the value', { 'retry-after': ' 5 ' }, 5_000, 5_000],
      ['zero', { 'retry-after': '0' }, 0, 0],
      ['fractional seconds', { 'retry-after': '1.5' }, undefined, 1_500],
      ['a fraction rounded to the millisecond', { 'retry-after': '0.0004' }, undefined, 0],
      ['a trailing dot', { 'retry-after': '2.' }, undefined, undefined],
      ['a negative number', { 'retry-after': '-1' }, undefined, undefined],
      ['an HTTP-date', { 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' }, undefined, undefined],
      ['garbage', { 'retry-after': 'soon' }, undefined, undefined],
      ['an empty value', { 'retry-after': '' }, undefined, undefined],
    ];
    for (const [what, headers, whole, fractional] of cases) {
      it(`${what} → ${String(whole)} / with fractions ${String(fractional)}`, () => {
        expect(retryAfterMs(headers)).to.equal(whole);
        expect(retryAfterMs(headers, { fractions: true })).to.equal(fractional);
      });
    }
  });

  describe('retryable', () => {
    it('carries the wait when one is known', () => {
      expect(retryable('HTTP 429', 30_000)).to.deep.equal({ outcome: 'retryable', message: 'HTTP 429', retryAfterMs: 30_000 });
    });

    it('has no retryAfterMs key at all without one', () => {
      const c = retryable('HTTP 503', undefined);
      expect(c).to.deep.equal({ outcome: 'retryable', message: 'HTTP 503' });
      expect(Object.keys(c)).to.deep.equal(['outcome', 'message']);
    });
  });
});
