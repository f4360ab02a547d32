// GA4 golden cases for personal data through the real pipeline (golden-fixtures.ts): the
// shapes in which an e-mail, a name, a phone, a postcode or a city slip into a page URL, a
// parameter the default rules copy from free-form properties, or the user agent. Each must
// leave the exact body below: URL parts sent as (redacted), userinfo left out, parameters
// and the user agent dropped, each with a warning.
import { expect } from 'chai';
import { CLIENT_ID, MICROS, GA, expectBody, ga4Golden } from './golden-fixtures.ts';

const { run } = ga4Golden();

const JANE = {
  id: 'crm-7001', email: 'jane.doe@example.com', phone: '+40 721 000 222', first_name: 'Jane', last_name: 'Doe',
  city: 'București', postal_code: '010101',
};
/** Without marketing consent, so the body carries no user_data and shows only what is in clear. */
const NO_ADS = { analytics: true, personalization: false, marketing: false };
const DENIED = { ad_user_data: 'DENIED', ad_personalization: 'DENIED' };

const lead = (id: string, context: Record<string, unknown>, properties?: Record<string, unknown>) => ({
  event: { name: 'lead_created', id, ...(properties ? { properties } : {}) },
  context: { environment: 'prod', data_source: 'website', ...context },
  user: JANE,
  consent: NO_ADS,
  cookies: [GA],
});

/** The exact body of Jane's lead: nothing but ids, consent and the generate_lead params given. */
function expectLead(result: ReturnType<typeof run>, id: string, params: Record<string, unknown>): void {
  expectBody(result, id, {
    client_id: CLIENT_ID, user_id: 'crm-7001', timestamp_micros: MICROS, consent: DENIED, events: [{ name: 'generate_lead', params }],
  });
}

const PAGE_WARNING = "ga4: page_location held what looks like an identifier (an e-mail, a phone, a hash or one of the user's identifiers); that part was sent as (redacted)";

describe('ga4 golden: personal data never reaches GA4 in clear', () => {
  it('an e-mail in the page URL\'s userinfo: the userinfo is left out', () => {
    const r = run(lead('LEAD-P1', { url: 'https://jane.doe%40example.com:x@shop.example.com/thanks?step=2' }), 'LEAD-P1');
    expectLead(r, 'LEAD-P1', { page_location: 'https://shop.example.com/thanks?step=2' });
    expect(r.warnings).to.include(PAGE_WARNING);
  });

  it('a double-encoded e-mail (%2540) in the query is decoded until stable and sent as (redacted)', () => {
    const r = run(lead('LEAD-P2', { url: 'https://shop.example.com/thanks?ref=jane.doe%2540example.com&utm_source=mail' }), 'LEAD-P2');
    expectLead(r, 'LEAD-P2', { page_location: 'https://shop.example.com/thanks?ref=(redacted)&utm_source=mail' });
    expect(r.warnings).to.include(PAGE_WARNING);
  });

  it('name=Jane+Doe (the user\'s own first and last name) is sent as (redacted)', () => {
    const r = run(lead('LEAD-P3', { url: 'https://shop.example.com/thanks?name=Jane+Doe&plan=pro' }), 'LEAD-P3');
    expectLead(r, 'LEAD-P3', { page_location: 'https://shop.example.com/thanks?name=(redacted)&plan=pro' });
  });

  it('another person\'s phone, and the user\'s postcode and city, in the query is sent as (redacted)', () => {
    const url = 'https://shop.example.com/thanks?friend=%2B40%20744%20555%20666&zip=010101&city=Bucuresti&plan=pro';
    const r = run(lead('LEAD-P4', { url }), 'LEAD-P4');
    expectLead(r, 'LEAD-P4', { page_location: 'https://shop.example.com/thanks?friend=(redacted)&zip=(redacted)&city=(redacted)&plan=pro' });
  });

  it('lead_source copied from properties is dropped when it holds an e-mail, with a warning', () => {
    const r = run(lead('LEAD-P5', { url: 'https://shop.example.com/thanks' }, { lead_source: 'jane.doe@example.com' }), 'LEAD-P5');
    expectLead(r, 'LEAD-P5', { page_location: 'https://shop.example.com/thanks' });
    expect(r.warnings).to.include(
      "ga4: parameter lead_source looks like an identifier (an e-mail, a phone, a hash or one of the user's identifiers) and was not sent",
    );
  });

  it('lead_source holding another person\'s phone or the user\'s name is dropped; a plain source is kept', () => {
    for (const source of ['call back +40 744 555 666', 'referred by Jane Doe', 'jane.doe%2540example.com']) {
      const r = run(lead('LEAD-P6', { url: 'https://shop.example.com/' }, { lead_source: source }), 'LEAD-P6');
      expectLead(r, 'LEAD-P6', { page_location: 'https://shop.example.com/' });
    }
    const kept = run(lead('LEAD-P7', { url: 'https://shop.example.com/' }, { lead_source: 'webinar 2026' }), 'LEAD-P7');
    expectLead(kept, 'LEAD-P7', { lead_source: 'webinar 2026', page_location: 'https://shop.example.com/' });
  });

  it('an e-mail inside user_agent: the user agent is left out, with a warning', () => {
    const ua = 'Mozilla/5.0 (compatible; LeadBot/1.0; +mailto:jane.doe@example.com)';
    const r = run(lead('LEAD-P8', { url: 'https://shop.example.com/thanks', user_agent: ua }), 'LEAD-P8');
    expectLead(r, 'LEAD-P8', { page_location: 'https://shop.example.com/thanks' });
    expect(r.warnings).to.include(
      "ga4: user_agent held what looks like an identifier (an e-mail, a phone, a hash or one of the user's identifiers) and was not sent",
    );
  });
});
