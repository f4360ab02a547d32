// End to end through the real pipeline: payload → validateEvent → mapEventForDestination with
// this folder's rules.json → the exact LinkedIn request, body compared byte for byte. The
// first case rebuilds LinkedIn's documented sample element ("Stream conversion events",
// Conversions API on Microsoft Learn); other hashes are literals computed with
// `printf %s 'jane.doe@example.com' | sha256sum` from the normal form in their comment.
import { expect } from 'chai';
import { NativeSchemaError } from 'tracklane/sdk';
import { expectOneRequest, expectReady, expectSkipped, goldenHarness } from 'tracklane/sdk/testing';
import plugin from './index.ts';

const ACCOUNT = { scriptId: 'AB12CD34', country: 'RO', host: 'https://shop.example' };
const RULES = { checkout_completed: '104012', lead_created: 104013, product_added_to_cart: 'urn:lla:llaPartnerConversion:104014' };
const SETTINGS = { access_token: 'AQV_TOKEN', conversion_rules: RULES };
const URL = 'https://api.linkedin.com/rest/conversionEvents';
const HEADERS = {
  'content-type': 'application/json', authorization: 'Bearer AQV_TOKEN', 'linkedin-version': '202603',
  'x-restli-protocol-version': '2.0.0', 'x-restli-method': 'BATCH_CREATE',
};
const consent = { analytics: true, personalization: true, marketing: true };
const UA = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15';
const web = (url: string, landing?: string) => ({ environment: 'prod', data_source: 'website', user_agent: UA, overide_ip: '203.0.113.9', url, ...(landing ? { landing_url: landing } : {}) });

const EM_JANE = '86e0b9e56c17cc4d12387e1949b85053fbe73bc3ce5a1188713a9d300cc6133d'; // jane.doe@example.com

// LinkedIn's sample: conversionHappenedAt 1695739275000, 1500.0 USD, eventId abc12345.
const DOC_RECEIVED = 1_695_739_275_000;
const golden = goldenHarness({ plugin, destination: { id: 'dst_li', name: 'LinkedIn' }, account: ACCOUNT, settings: SETTINGS, receivedAt: DOC_RECEIVED, now: DOC_RECEIVED + 2000 });

describe('linkedin golden requests', () => {
  it('checkout_completed → LinkedIn\'s documented sample element, byte for byte', () => {
    const payload = {
      event: { name: 'checkout_completed', value: 1500, currency: 'USD', id: 'abc12345' },
      context: web('https://shop.example/checkout/thank-you', 'https://shop.example/?li_fat_id=df5gf5-gh6t7-ph4j7h-fgf6n1'),
      products: [{ id: 'SKU-1', name: 'Annual plan', price_base: 1500, price: 1500, quantity: 1, tax_percent: 0, category: 'Plans' }],
      // The sample's e-mail hash is given as it is: a SHA-256 digest passes through unhashed.
      user: {
        email: 'bad8677b6c86f5d308ee82786c183482a5995f066694246c58c4df37b0cc41f1', first_name: 'Mike', last_name: 'Smith', country: 'US',
        properties: { company: 'microsoft', job_title: 'software engineer' },
      },
      consent,
    };
    const [req] = expectReady(golden.run(payload, 'abc12345'));
    expect(req.url).to.equal(URL);
    expect(req.headers).to.deep.equal(HEADERS);
    expect(req.eventIds).to.deep.equal(['abc12345']);
    expect(req.body).to.equal(
      '{"elements":[{"conversion":"urn:lla:llaPartnerConversion:104012","conversionHappenedAt":1695739275000,' +
      '"conversionValue":{"currencyCode":"USD","amount":"1500.0"},' +
      '"user":{"userIds":[{"idType":"SHA256_EMAIL","idValue":"bad8677b6c86f5d308ee82786c183482a5995f066694246c58c4df37b0cc41f1"},' +
      '{"idType":"LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID","idValue":"df5gf5-gh6t7-ph4j7h-fgf6n1"}],' +
      '"userInfo":{"firstName":"mike","lastName":"smith","title":"software engineer","companyName":"microsoft","countryCode":"US"}},' +
      '"eventId":"abc12345"}]}',
    );
  });

  it('lead_created → e-mail hashed, li_fat_id from the cookie, the customer id as externalIds, a numeric rule id', () => {
    const payload = {
      event: { name: 'lead_created', id: 'LEAD-2001', value: 250, currency: 'EUR' },
      context: web('https://shop.example/contact'),
      user: { id: 'CUST-881', email: ' Jane.Doe@Example.com ', phone: '+40 722 123 456', country: 'RO' },
      cookies: [{ name: 'li_fat_id', value: '3f1a9c1e-7c2b-4d5e-9a8b-1c2d3e4f5a6b' }, { name: '_fbp', value: 'fb.1.1712345678901.1234567890' }],
      consent,
    };
    expectOneRequest(golden.run(payload, 'LEAD-2001'), {
      url: URL, headers: HEADERS, eventId: 'LEAD-2001',
      body: {
        elements: [{
          conversion: 'urn:lla:llaPartnerConversion:104013', conversionHappenedAt: DOC_RECEIVED,
          conversionValue: { currencyCode: 'EUR', amount: '250.0' },
          user: {
            userIds: [{ idType: 'SHA256_EMAIL', idValue: EM_JANE }, { idType: 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID', idValue: '3f1a9c1e-7c2b-4d5e-9a8b-1c2d3e4f5a6b' }],
            externalIds: ['CUST-881'], // no names: no userInfo, so the country goes nowhere
          },
          eventId: 'LEAD-2001',
        }],
      },
    });
  });

  /** Two shirts added to the cart by `user`, on a page reached from `landing`. */
  const cartAdd = (user: Record<string, string>, landing?: string) => ({
    event: { name: 'product_added_to_cart', value: 99.8, currency: 'EUR' },
    context: web('https://shop.example/p/linen-shirt', landing),
    products: [{ id: 'SKU-RED-M', name: 'Linen Shirt', price_base: 59.9, price: 49.9, quantity: 2, tax_percent: 19, category: 'Shirts' }],
    user, consent,
  });

  it('product_added_to_cart → the URN as configured, cents kept, warnings for LinkedIn traffic without li_fat_id', () => {
    const payload = cartAdd({ first_name: 'Jane', email: 'jane.doe@example.com' }, 'https://shop.example/?utm_source=linkedin&utm_campaign=spring');
    const result = golden.run(payload, 'tl_add_1', { ...SETTINGS, api_version: '202606' });
    expectOneRequest(result, {
      url: URL, headers: { ...HEADERS, 'linkedin-version': '202606' }, eventId: 'tl_add_1',
      body: {
        elements: [{
          conversion: 'urn:lla:llaPartnerConversion:104014', conversionHappenedAt: DOC_RECEIVED,
          conversionValue: { currencyCode: 'EUR', amount: '99.8' }, user: { userIds: [{ idType: 'SHA256_EMAIL', idValue: EM_JANE }] }, eventId: 'tl_add_1',
        }],
      },
    });
    expect(result.warnings).to.deep.equal([
      'linkedin: the landing URL has utm_source=linkedin but no li_fat_id: turn on enhanced conversion tracking in Campaign Manager so LinkedIn adds li_fat_id to ad clicks',
      'linkedin: LinkedIn takes userInfo only with both first and last name; with one of them it is left out',
    ]);
  });

  it('an event LinkedIn can never match (no e-mail, no li_fat_id, one name) is skipped as unmatchable, never built', () => {
    const result = golden.run(cartAdd({ first_name: 'Jane' }), 'tl_add_2');
    expectSkipped(result, 'unmatchable');
    expect(result.status === 'skipped' && result.message).to.equal(
      'linkedin: LinkedIn matches a conversion by a hashed email, the li_fat_id click id or first and last name together; this event has none (userIds would be empty) and cannot be attributed; nothing sent',
    );
    const named = golden.run(cartAdd({ first_name: 'Jane', last_name: 'Doe' }), 'tl_add_2');
    expect(JSON.parse(expectReady(named)[0].body).elements[0].user, 'both names are enough').to.deep.equal({ userIds: [], userInfo: { firstName: 'jane', lastName: 'doe' } });
  });

  it('an event with no conversion rule configured is skipped, not sent and not an error', () => {
    const viewed = {
      event: { name: 'product_viewed', value: 49.9, currency: 'EUR' }, context: web('https://shop.example/p/linen-shirt'),
      products: [{ id: 'SKU-RED-M', name: 'Linen Shirt', price_base: 49.9, price: 49.9, quantity: 1, tax_percent: 19, category: 'Shirts' }],
      user: { email: 'jane.doe@example.com' }, consent,
    };
    const result = golden.run(viewed, 'tl_view_1');
    expectSkipped(result, 'condition_not_met');
    expect(result.status === 'skipped' && result.message).to.equal(
      'linkedin: rule linkedin.view_content is written for product_viewed, but produced no native event (its "when" condition was false, or it failed: see warnings); nothing sent',
    );
    const mapped = golden.run(viewed, 'tl_view_1', { ...SETTINGS, conversion_rules: { ...RULES, product_viewed: '104015' } });
    expect(JSON.parse(expectReady(mapped)[0].body).elements[0].conversion).to.equal('urn:lla:llaPartnerConversion:104015');
  });

  it('events LinkedIn has no conversion for are skipped with no_matching_rule; marketing consent refused sends nothing', () => {
    const withAll = { ...SETTINGS, conversion_rules: { ...RULES, order_canceled: '1', product_removed_from_cart: '2' } };
    expectSkipped(golden.run({ event: { name: 'order_canceled', id: 'ORD-1' }, context: { environment: 'prod', data_source: 'admin' }, consent }, 'ORD-1', withAll), 'no_matching_rule');
    const refused = { event: { name: 'lead_created', id: 'L-9' }, context: web('https://shop.example/contact'), user: { email: 'jane.doe@example.com' }, consent: { ...consent, marketing: false } };
    expectSkipped(golden.run(refused, 'L-9'), 'consent');
  });

  it('an account rule writing what LinkedIn does not take is refused before sending, naming the rule and the path', () => {
    const payload = { event: { name: 'lead_created', id: 'L-3' }, context: web('https://shop.example/contact'), user: { email: 'jane.doe@example.com' }, consent };
    const mistaken = [{ id: 'acct.lead', event: 'lead_created', output: { conversion: 'lead', eventId: 'mine' } }];
    expect(() => golden.run(payload, 'L-3', SETTINGS, mistaken)).to.throw(NativeSchemaError, /^linkedin: rule acct\.lead produced a native event the linkedin schema refuses \(.*eventId.*\/conversion: must match pattern/);
  });
});
