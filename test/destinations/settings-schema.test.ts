// The common settings fragment: what it accepts and refuses, and the endpoint base URL.
import { Ajv } from 'ajv';
import formatsPlugin from 'ajv-formats';
import { expect } from 'chai';
import { baseUrl, COMMON_SETTINGS_PROPERTIES } from '../../src/destinations/settings-schema.ts';

describe('destinations: settings-schema', () => {
  describe('COMMON_SETTINGS_PROPERTIES', () => {
    const ajv = new Ajv({ allErrors: true, strict: true });
    formatsPlugin.default(ajv);
    const validate = ajv.compile({ type: 'object', additionalProperties: false, properties: COMMON_SETTINGS_PROPERTIES });

    it('names the common keys in a fixed order (the loader requires endpoint, events and consent_category)', () => {
      expect(Object.keys(COMMON_SETTINGS_PROPERTIES)).to.deep.equal(['endpoint', 'test_event_code', 'events', 'consent_category', 'max_concurrency', 'timeout_ms']);
    });

    it('accepts no settings and every key', () => {
      expect(validate({})).to.equal(true);
      const all = { endpoint: 'http://127.0.0.1:9000/', test_event_code: 'T1', events: ['checkout_completed'], consent_category: 'analytics', max_concurrency: 64, timeout_ms: 30_000 };
      expect(validate(all), JSON.stringify(validate.errors)).to.equal(true);
    });

    const refused: [string, Record<string, unknown>][] = [
      ['a relative endpoint', { endpoint: '/x' }],
      ['an ftp endpoint', { endpoint: 'ftp://example.com' }],
      ['an empty test_event_code', { test_event_code: '' }],
      ['events as a string', { events: 'checkout_completed' }],
      ['an empty event name', { events: [''] }],
      ['an event listed twice', { events: ['a', 'a'] }],
      ['an unknown consent_category', { consent_category: 'personalization' }],
      ['a max_concurrency of 0', { max_concurrency: 0 }],
      ['a max_concurrency over 64', { max_concurrency: 65 }],
      ['a fractional max_concurrency', { max_concurrency: 2.5 }],
      ['a timeout_ms under 1,000', { timeout_ms: 999 }],
      ['a timeout_ms over 30,000', { timeout_ms: 30_001 }],
      ['a timeout_ms as a string', { timeout_ms: '5000' }],
    ];
    for (const [what, config] of refused) {
      it(`refuses ${what}`, () => expect(validate(config)).to.equal(false));
    }
  });

  describe('baseUrl', () => {
    it('is the platform default without an endpoint', () => {
      expect(baseUrl(undefined, 'https://graph.facebook.com')).to.equal('https://graph.facebook.com');
    });

    it('is the endpoint, trailing slashes trimmed, when set', () => {
      expect(baseUrl('http://127.0.0.1:9000//', 'https://graph.facebook.com')).to.equal('http://127.0.0.1:9000');
      expect(baseUrl('https://sandbox.example/api/', 'https://x')).to.equal('https://sandbox.example/api');
    });
  });
});
