// GA4 golden edge cases through the real pipeline (golden-fixtures.ts): consent given for
// personalization but not marketing, an event delivered more than 72 hours after it arrived
// and one within, and page URLs carrying identifiers.
import { expect } from 'chai';
import { expectReady } from 'tracklane/sdk/testing';
import { CLIENT_ID, DERIVED_CLIENT_ID, GA, GA_SESSION, H, HOST_URL, HOUR, MICROS, MUG, MUG_ITEM, RECEIVED, SESSION_ID, expectBody, ga4Golden } from './golden-fixtures.ts';

const { run } = ga4Golden();

describe('ga4 golden edge cases', () => {
  it('consent denied for marketing but given for personalization: ad_personalization DENIED too (personalised ads are advertising)', () => {
    const payload = {
      event: { name: 'lead_qualified', id: 'LEAD-80', value: 500, currency: 'EUR' },
      context: { environment: 'prod', data_source: 'crm' },
      user: { id: 'crm-9001', email: 'maria.ionescu@example.ro' },
      consent: { analytics: true, personalization: true, marketing: false },
    };
    expectBody(run(payload, 'LEAD-80'), 'LEAD-80', {
      client_id: DERIVED_CLIENT_ID,
      user_id: 'crm-9001',
      timestamp_micros: MICROS,
      consent: { ad_user_data: 'DENIED', ad_personalization: 'DENIED' },
      events: [{ name: 'qualify_lead', params: { value: 500, currency: 'EUR', page_location: HOST_URL } }],
    });
  });

  it('an event sent more than 72 hours after it was received: time moved to 72 hours ago (less a minute), session left out, with a warning', () => {
    const late = ga4Golden(80 * HOUR);
    const payload = {
      event: { name: 'checkout_completed', id: 'ORD-2026-0050', value: 49.99, currency: 'EUR' },
      context: { environment: 'prod', data_source: 'website', url: 'https://shop.example.com/thanks', referrer_url: 'https://shop.example.com/checkout' },
      products: [{ ...MUG, quantity: 1 }],
      consent: { analytics: true, personalization: true, marketing: true },
      cookies: [GA, GA_SESSION],
    };
    const r = late.run(payload, 'ORD-2026-0050');
    expectBody(r, 'ORD-2026-0050', {
      client_id: CLIENT_ID,
      timestamp_micros: (RECEIVED + 8 * HOUR + 60_000) * 1000,
      consent: { ad_user_data: 'GRANTED', ad_personalization: 'GRANTED' },
      events: [{
        name: 'purchase',
        params: {
          transaction_id: 'ORD-2026-0050', value: 49.99, currency: 'EUR', items: [{ ...MUG_ITEM, quantity: 1 }],
          page_location: 'https://shop.example.com/thanks', page_referrer: 'https://shop.example.com/checkout',
        },
      }],
    });
    expect(r.warnings).to.include(
      'ga4: an event older than 72 hours was sent with its time moved to 72 hours ago (GA4 keeps no older time) and without its session_id',
    );
  });

  it('an event within 72 hours keeps its own time, session and no warning', () => {
    const later = ga4Golden(71 * HOUR);
    const payload = {
      event: { name: 'product_added_to_cart', value: 99.98, currency: 'EUR' },
      context: { environment: 'prod', data_source: 'website' },
      products: [MUG],
      consent: { analytics: true, personalization: true, marketing: true },
      cookies: [GA, GA_SESSION],
    };
    const r = later.run(payload, 'tl-add-2');
    const body = JSON.parse(expectReady(r)[0].body);
    expect(body.timestamp_micros).to.equal(MICROS);
    expect(body.events[0].params).to.include({ session_id: SESSION_ID, engagement_time_msec: 1 });
    expect(r.warnings.filter((w) => w.includes('72 hours'))).to.deep.equal([]);
  });

  it('page URLs keep no identifier: an e-mail in the query and the user\'s id in the path are sent as (redacted), with a warning', () => {
    const payload = {
      event: { name: 'lead_created', id: 'LEAD-81' },
      context: {
        environment: 'prod', data_source: 'website',
        url: 'https://shop.example.com/account/crm-9001/thanks?utm_source=newsletter&email=maria.ionescu%40example.ro#done',
        referrer_url: 'https://mail.example.net/open?to=maria.ionescu@example.ro',
      },
      user: { id: 'crm-9001', email: 'maria.ionescu@example.ro' },
      consent: { analytics: true, personalization: true, marketing: true },
      cookies: [GA],
    };
    const r = run(payload, 'LEAD-81');
    expectBody(r, 'LEAD-81', {
      client_id: CLIENT_ID,
      user_id: 'crm-9001',
      timestamp_micros: MICROS,
      user_data: { sha256_email_address: [H.email_maria] },
      consent: { ad_user_data: 'GRANTED', ad_personalization: 'GRANTED' },
      events: [{
        name: 'generate_lead',
        params: {
          page_location: 'https://shop.example.com/account/(redacted)/thanks?utm_source=newsletter&email=(redacted)#done',
          page_referrer: 'https://mail.example.net/open?to=(redacted)',
        },
      }],
    });
    expect(r.warnings).to.include.members([
      "ga4: page_location held what looks like an identifier (an e-mail, a phone, a hash or one of the user's identifiers); that part was sent as (redacted)",
      "ga4: page_referrer held what looks like an identifier (an e-mail, a phone, a hash or one of the user's identifiers); that part was sent as (redacted)",
    ]);
  });
});
