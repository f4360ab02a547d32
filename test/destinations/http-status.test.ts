// The platform APIs' status rule: 408, 429, 5xx retry; 3xx and other 4xx are final.
import { expect } from 'chai';
import { classifyHttpStatus, isRedirectStatus, isRetryableStatus, isSuccessStatus } from '../../src/destinations/http-status.ts';

describe('destinations: http-status', () => {
  it('sorts statuses into success, redirect and retryable at the class edges', () => {
    const sorted = [199, 200, 299, 300, 399, 400, 407, 408, 410, 428, 429, 499, 500, 599].map((s) => [s, isSuccessStatus(s), isRedirectStatus(s), isRetryableStatus(s)]);
    expect(sorted).to.deep.equal([
      [199, false, false, false],
      [200, true, false, false],
      [299, true, false, false],
      [300, false, true, false],
      [399, false, true, false],
      [400, false, false, false],
      [407, false, false, false],
      [408, false, false, true],
      [410, false, false, false],
      [428, false, false, false],
      [429, false, false, true],
      [499, false, false, false],
      [500, false, false, true],
      [599, false, false, true],
    ]);
  });

  describe('classifyHttpStatus', () => {
    const options = { redirectNote: ': redirect not followed' };
    const cases: [number, ReturnType<typeof classifyHttpStatus>][] = [
      [408, { outcome: 'retryable', message: 'HTTP 408' }],
      [429, { outcome: 'retryable', message: 'HTTP 429' }],
      [500, { outcome: 'retryable', message: 'HTTP 500' }],
      [503, { outcome: 'retryable', message: 'HTTP 503' }],
      [301, { outcome: 'permanent', message: 'HTTP 301: redirect not followed' }],
      [307, { outcome: 'permanent', message: 'HTTP 307: redirect not followed' }],
      [400, { outcome: 'permanent', message: 'HTTP 400' }],
      [401, { outcome: 'permanent', message: 'HTTP 401' }],
      [404, { outcome: 'permanent', message: 'HTTP 404' }],
      [410, { outcome: 'permanent', message: 'HTTP 410' }],
    ];
    for (const [status, expected] of cases) {
      it(`${status} → ${expected.outcome}`, () => expect(classifyHttpStatus(status, `HTTP ${status}`, options)).to.deep.equal(expected));
    }

    it('passes the wait on to a retryable status only', () => {
      expect(classifyHttpStatus(429, 'HTTP 429', { ...options, retryAfterMs: 5_000 })).to.deep.equal({ outcome: 'retryable', message: 'HTTP 429', retryAfterMs: 5_000 });
      expect(classifyHttpStatus(400, 'HTTP 400', { ...options, retryAfterMs: 5_000 })).to.deep.equal({ outcome: 'permanent', message: 'HTTP 400' });
    });
  });
});
