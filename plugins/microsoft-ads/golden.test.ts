// End to end through the real pipeline: payload → validateEvent → mapEventForDestination with
// this folder's rules.json → the exact Conversions API request, body compared byte for byte.
// The first case uses the CAPI guide's own hashing example (john@contoso.com → ec81f3ac…,
// +14255551234 → c59475d9…); every other hash is a literal computed from the hand-normalised
// string in its comment with `printf %s 'johndoe@contoso.com' | sha256sum`.
import { expect } from 'chai';
import { NativeSchemaError } from 'tracklane/sdk';
import { expectOneRequest, expectReady, expectSkipped, goldenHarness } from 'tracklane/sdk/testing';
import plugin from './index.ts';

const ACCOUNT = { scriptId: 'AB12CD34', country: 'RO', host: 'https://shop.example' };
const RECEIVED = 1_760_000_000_123; // eventTime 1760000000
const SETTINGS = { tag_id: '97247724', access_token: 'uet-capi-TOKEN' };
const URL = 'https://capi.uet.microsoft.com/v1/97247724/events';
const HEADERS = { 'content-type': 'application/json', authorization: 'Bearer uet-capi-TOKEN' };

const UA = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15';
const consent = { analytics: true, personalization: true, marketing: true };
const shirt = { id: 'SKU-RED-M', parent_id: 'SKU-RED', name: 'Linen Shirt Red M', parent_name: 'Linen Shirt', price_base: 59.9, price: 49.9, tax_included: true, tax_percent: 19, quantity: 2, category: 'Shirts', type: 'variable', stock_status: true };
const mug = { id: 'SKU-MUG', parent_id: 'SKU-MUG', name: 'Coffee Mug', price_base: 15, price: 15, tax_included: true, tax_percent: 19, quantity: 1, category: 'Kitchen', type: 'simple', stock_status: true };
const web = (url: string) => ({ environment: 'prod', data_source: 'website', user_agent: UA, overide_ip: '2a02:2f0e:1234::1', url });
const SHIRT_2 = { id: 'SKU-RED-M', quantity: 2, price: 49.9, name: 'Linen Shirt Red M' };
const MUG_1 = { id: 'SKU-MUG', quantity: 1, price: 15, name: 'Coffee Mug' };

const H = {
  docEm: 'ec81f3ac7b2b19675bab9d54cf416f9f18cff87c97da5cca82c0f0891bc40602', // john@contoso.com (the guide's example)
  docPh: 'c59475d96e9f01d7d18d06cfad84dd02333207f02c0c2c5663ef2782cda0390e', // +14255551234 (the guide's example)
  em: '7272c6a41efa18b518d5789e2336282715b23c50a51cc2890643bdaa97b96840', // johndoe@contoso.com: dots and +alias out of the local part
  ph: '93841fe8558bfa0dbc484f476f27af1de186cd33dfb09c4d1215d42f1abbe0f5', // +40722123456: E.164 with the +
  externalId: '9967dcee56532704d42421d462ff1cf0f6a5dd522730db5d62ae81478fd0473b', // CUST-881: trimmed, case kept
};
const VID = 'fe910b70374111f185174b19733c8403';

const golden = goldenHarness({ plugin, destination: { id: 'dst_msads', name: 'Microsoft Ads' }, account: ACCOUNT, settings: SETTINGS, receivedAt: RECEIVED, now: RECEIVED + 2000 });

describe('microsoft-ads golden requests', () => {
  it('checkout_completed → custom purchase: the guide\'s hashing example, msclkid from the URL as a UUID, the UET visitor id, revenue and items', () => {
    const payload = {
      event: { name: 'checkout_completed', value: 114.8, currency: 'EUR', id: 'ORD-10045' },
      context: { ...web('https://shop.example/checkout/thank-you?msclkid=dd4afcccb1c94a4cad9544dd7e5006ab'), referrer_url: 'https://shop.example/checkout' },
      products: [shirt, mug],
      user: { id: 'CUST-881', email: ' John@Contoso.com ', phone: '+1 (425) 555-1234' },
      consent,
      cookies: [{ name: '_uetvid', value: VID }, { name: '_fbp', value: 'fb.1.1712345678901.1234567890' }],
    };
    expectOneRequest(golden.run(payload, 'ORD-10045'), {
      url: URL, headers: HEADERS, eventId: 'ORD-10045',
      body: {
        data: [{
          eventType: 'custom', eventId: 'ORD-10045', eventName: 'purchase', eventTime: 1760000000,
          eventSourceUrl: 'https://shop.example/checkout/thank-you?msclkid=dd4afcccb1c94a4cad9544dd7e5006ab',
          referrerUrl: 'https://shop.example/checkout',
          adStorageConsent: 'G',
          userData: {
            clientUserAgent: UA, anonymousId: VID, externalId: H.externalId, em: H.docEm, ph: H.docPh,
            clientIpAddress: '2a02:2f0e:1234::1', msclkid: 'dd4afccc-b1c9-4a4c-ad95-44dd7e5006ab',
          },
          customData: {
            value: 114.8, currency: 'EUR', transactionId: 'ORD-10045', items: [SHIRT_2, MUG_1], itemIds: ['SKU-RED-M', 'SKU-MUG'],
            pageType: 'purchase', ecommTotalValue: 114.8,
          },
        }],
        continueOnValidationError: true,
        dataProvider: 'tracklane',
      },
    });
  });

  it('product_added_to_cart → add_to_cart: Microsoft\'s e-mail form, a national phone, msclkid from the _uetmsclkid cookie', () => {
    const payload = {
      event: { name: 'product_added_to_cart', value: 99.8, currency: 'EUR' },
      context: web('https://shop.example/p/linen-shirt'),
      products: [shirt],
      user: { email: ' John.Doe+Shop@Contoso.com ', phone: '0722 123 456' },
      consent,
      cookies: [{ name: '_uetmsclkid', value: '_uetb1240587f865192a03586c5b000314f5' }],
    };
    const result = golden.run(payload, 'tl_add_1');
    expectOneRequest(result, {
      url: URL, headers: HEADERS, eventId: 'tl_add_1',
      body: {
        data: [{
          eventType: 'custom', eventId: 'tl_add_1', eventName: 'add_to_cart', eventTime: 1760000000,
          eventSourceUrl: 'https://shop.example/p/linen-shirt',
          adStorageConsent: 'G',
          userData: { clientUserAgent: UA, em: H.em, ph: H.ph, clientIpAddress: '2a02:2f0e:1234::1', msclkid: 'b1240587-f865-192a-0358-6c5b000314f5' },
          customData: { value: 99.8, currency: 'EUR', items: [SHIRT_2], itemIds: ['SKU-RED-M'] },
        }],
        continueOnValidationError: true,
        dataProvider: 'tracklane',
      },
    });
    expect(result.warnings).to.deep.equal([]);
  });

  it('lead_created from a CRM → generate_lead with the hashed customer id only; warned that nothing ties it to a click', () => {
    const payload = { event: { name: 'lead_created', id: 'LEAD-2001' }, context: { environment: 'prod', data_source: 'crm' }, user: { id: 'CUST-881' }, consent };
    const result = golden.run(payload, 'LEAD-2001');
    expectOneRequest(result, {
      url: URL, eventId: 'LEAD-2001',
      body: {
        data: [{
          eventType: 'custom', eventId: 'LEAD-2001', eventName: 'generate_lead', eventTime: 1760000000,
          eventSourceUrl: 'https://shop.example', // no context.url: validation puts the account host there
          adStorageConsent: 'G',
          userData: { externalId: H.externalId },
        }],
        continueOnValidationError: true,
        dataProvider: 'tracklane',
      },
    });
    expect(result.warnings).to.deep.equal(['microsoft-ads: no match keys — email, phone, msclkid and uetvid all missing']);
  });

  it('a visit tagged utm_source=bing without msclkid, and one with a malformed msclkid, are warned about', () => {
    const tagged = {
      event: { name: 'product_viewed', value: 49.9, currency: 'EUR' },
      context: { ...web('https://shop.example/p/linen-shirt'), landing_url: 'https://shop.example/?utm_source=bing&utm_medium=cpc' },
      products: [shirt], user: { email: 'ana@example.com' }, consent,
    };
    const [req] = expectReady(golden.run(tagged, 'tl_view_1'));
    expect(JSON.parse(req.body).data[0]).to.deep.include({ eventName: 'view_item' });
    expect(JSON.parse(req.body).data[0].customData).to.deep.equal({ value: 49.9, currency: 'EUR', items: [SHIRT_2], itemIds: ['SKU-RED-M'], pageType: 'product' });
    expect(golden.run(tagged, 'tl_view_1').warnings).to.deep.equal([
      'microsoft-ads: the page URL is tagged as Microsoft Advertising traffic (utm_source) but carries no msclkid: turn on auto-tagging of the Microsoft Click ID, or this conversion cannot be attributed to the ad click',
    ]);
    const malformed = { ...tagged, context: web('https://shop.example/p/linen-shirt?msclkid=not-a-click-id') };
    const result = golden.run(malformed, 'tl_view_2');
    expect(JSON.parse(expectReady(result)[0].body).data[0].userData).to.not.have.property('msclkid');
    expect(result.warnings).to.deep.equal(['microsoft-ads: msclkid in the page URL is not a Microsoft click id (a UUID); not sent']);
  });

  it('gated on analytics with marketing refused: adStorageConsent D and no hashed contacts', () => {
    const payload = {
      event: { name: 'cart_viewed', value: 114.8, currency: 'EUR' },
      context: web('https://shop.example/cart?msclkid=dd4afcccb1c94a4cad9544dd7e5006ab'),
      products: [shirt, mug], user: { id: 'CUST-881', email: 'john@contoso.com' },
      consent: { ...consent, marketing: false },
    };
    const result = golden.run(payload, 'tl_cart_1', { ...SETTINGS, consent_category: 'analytics' });
    const [event] = JSON.parse(expectReady(result)[0].body).data;
    expect(event).to.deep.include({ eventName: 'view_cart', adStorageConsent: 'D' });
    expect(event.userData).to.deep.equal({ clientUserAgent: UA, clientIpAddress: '2a02:2f0e:1234::1', msclkid: 'dd4afccc-b1c9-4a4c-ad95-44dd7e5006ab' });
    expect(event.customData).to.deep.include({ pageType: 'cart', ecommTotalValue: 114.8 });
    expect(result.warnings).to.include('microsoft-ads: marketing consent is refused: sent with adStorageConsent D and without hashed email, phone or customer id; Microsoft uses it for no advertising purpose, conversions included');
  });

  it('an e-mail that arrived hashed passes through as given', () => {
    const prehashed = H.docEm.toUpperCase();
    const payload = { event: { name: 'lead_qualified', id: 'LEAD-7' }, context: { environment: 'prod', data_source: 'crm' }, user: { email: prehashed }, consent };
    const [event] = JSON.parse(expectReady(golden.run(payload, 'LEAD-7'))[0].body).data;
    expect(event).to.deep.include({ eventName: 'qualify_lead' });
    expect(event.userData).to.deep.equal({ em: H.docEm });
  });

  it('order_canceled has no rule, a lost lead meets no rule\'s condition; marketing consent refused sends nothing', () => {
    expectSkipped(golden.run({ event: { name: 'order_canceled', id: 'ORD-10045' }, context: { environment: 'prod', data_source: 'admin' }, consent }, 'ORD-10045'), 'no_matching_rule');
    const lost = { event: { name: 'lead_closed', id: 'LEAD-9', properties: { outcome: 'lost' } }, context: { environment: 'prod', data_source: 'crm' }, user: { id: 'CUST-881' }, consent };
    expectSkipped(golden.run(lost, 'LEAD-9'), 'condition_not_met');
    const won = { ...lost, event: { name: 'lead_closed', id: 'LEAD-9', value: 900, currency: 'EUR', properties: { outcome: 'won' } } };
    expect(JSON.parse(expectReady(golden.run(won, 'LEAD-9'))[0].body).data[0]).to.deep.include({ eventName: 'close_convert_lead', customData: { value: 900, currency: 'EUR' } });
    const refused = { event: { name: 'lead_created', id: 'L-9' }, context: web('https://shop.example/contact'), user: { email: 'ana@example.com' }, consent: { ...consent, marketing: false } };
    expectSkipped(golden.run(refused, 'L-9'), 'consent');
  });

  it('an account rule may send a pageLoad; one giving a page load revenue, or a custom event no action, is refused before sending', () => {
    const payload = { event: { name: 'lead_created', id: 'L-3' }, context: web('https://shop.example/contact'), user: { email: 'ana@example.com' }, consent };
    const pageLoad = [{ id: 'acct.page', event: 'lead_created', output: { eventType: 'pageLoad', pageTitle: 'Contact' } }];
    const [event] = JSON.parse(expectReady(golden.run(payload, 'L-3', SETTINGS, pageLoad))[0].body).data;
    expect(event).to.deep.include({ eventType: 'pageLoad', eventSourceUrl: 'https://shop.example/contact', pageTitle: 'Contact' });
    const mistaken = [{ id: 'acct.lead', event: 'lead_created', output: { eventType: 'pageLoad', 'customData.value': 10 } }];
    expect(() => golden.run(payload, 'L-3', SETTINGS, mistaken)).to.throw(NativeSchemaError, 'microsoft-ads: rule acct.lead produced a native event the microsoft-ads schema refuses');
    const nameless = [{ id: 'acct.lead', event: 'lead_created', output: { 'customData.value': 10 } }];
    expect(() => golden.run(payload, 'L-3', SETTINGS, nameless)).to.throw(NativeSchemaError, "must have required property 'eventName'");
  });
});
