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

    it('names the keys the plugin loader requires, in a fixed order', () => {
      expect(Object.keys(COMMON_SETTINGS_PROPERTIES)).to.deep.equal(['endpoint', 'test_event_code', 'events', 'consent_category']);
    });

    it('accepts no settings and every key', () => {
      expect(validate({})).to.equal(true);
      const all = { endpoint: 'http://127.0.0.1:9000/', test_event_code: 'T1', events: ['checkout_completed'], consent_category: 'analytics' };
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
