// The masked trace fails closed: every value of `payload.user` but the few documented as
// visible is masked whatever its key is called (`Email`, `mail`, `properties.email`, nested,
// in a list), a visible field holding an e-mail or phone is masked too, and the masked text
// does not survive anywhere else in the trace in another spelling (case, percent- or
// form-encoded, double-encoded, a phone by its digits), nor does any e-mail-like text.
import { expect } from 'chai';
import { IDENTIFIER_MASK, looksLikeIdentifier, maskTraceIdentifiers, VISIBLE_USER_FIELDS } from '../../src/admin/mask-identifiers.ts';

const M = IDENTIFIER_MASK;

/** A trace as traceEvent builds it, with the user's identifiers under the keys and spellings an attacker would try. */
function trace(user: unknown, elsewhere: unknown = {}) {
  return {
    event: {
      id: 'evt_1', event_id: 'ORD-100000123', name: 'checkout_completed',
      payload: { event: { name: 'checkout_completed', id: 'ORD-100000123', properties: { order_ref: 'ORD-100000123' } }, user, ...(elsewhere as object) },
    },
    deliveries: [] as unknown[],
  };
}

const ATTACKER_USER = {
  id: 'crm-77', external_id: 'ext-1', country: 'DE', orders_total_number: 3, created_at: 1_700_000_000_000,
  Email: 'Jane.Roe@example.org', EMAIL: 'jane.roe@example.org', mail: 'jane.roe@example.org', 'e-mail': 'jane.roe@example.org',
  Phone: '+49 151 1234 5678', mobile: 4915112345678, nickname: 'Jane Roe', Country: 'Germany',
  properties: { email: 'jane.roe@example.org', contact: { Mail: 'jr@example.net', phones: ['0151 98765432'] }, zip: '10115' },
};

describe('admin: identifiers masked in a trace (fails closed)', () => {
  it('masks every user value under any key, case or nesting; keeps only the documented visible fields', () => {
    const masked = maskTraceIdentifiers(trace(ATTACKER_USER)) as any;
    expect(masked.identifiers).to.equal('masked');
    expect(masked.event.payload.user).to.deep.equal({
      id: 'crm-77', external_id: 'ext-1', country: 'DE', orders_total_number: 3, created_at: 1_700_000_000_000,
      Email: M, EMAIL: M, mail: M, 'e-mail': M, Phone: M, mobile: M, nickname: M, Country: M,
      properties: { email: M, contact: { Mail: M, phones: [M] }, zip: M },
    });
    // What identifies no one is left alone.
    expect(masked.event.payload.event).to.deep.equal({ name: 'checkout_completed', id: 'ORD-100000123', properties: { order_ref: 'ORD-100000123' } });
    expect(masked.event.event_id).to.equal('ORD-100000123');
  });

  for (const value of ['jane.roe@example.org', 'jane.roe%40example.org', 'jane.roe%2540example.org', 'JANE.ROE@EXAMPLE.ORG', ' jane.roe@example.org ',
    '+4915112345678', '0151 1234 5678', '(0151) 1234-5678', '%2B4915112345678', '+49+151+12345678']) {
    it(`masks a visible field holding an identifier: ${JSON.stringify(value)}`, () => {
      const masked = maskTraceIdentifiers(trace({ id: value, external_id: value, country: 'DE' })) as any;
      expect(masked.event.payload.user).to.deep.equal({ id: M, external_id: M, country: 'DE' });
    });
  }

  it('masks a visible field holding an object or list (only plain values are shown)', () => {
    const masked = maskTraceIdentifiers(trace({ id: { email: 'a@b.example' }, external_id: ['Jane Roe'] })) as any;
    expect(masked.event.payload.user).to.deep.equal({ id: { email: M }, external_id: [M] });
  });

  it('masks a user that is not an object whole', () => {
    expect((maskTraceIdentifiers(trace('jane.roe@example.org')) as any).event.payload.user).to.equal(M);
    expect((maskTraceIdentifiers(trace(['Jane Roe', 'jane.roe@example.org'])) as any).event.payload.user).to.deep.equal([M, M]);
  });

  it('masks the user\'s text wherever it reappears, in any spelling, and any e-mail-like text', () => {
    const elsewhere = {
      context: { url: 'https://shop.example/thanks?email=jane.roe%40example.org&n=Jane+Roe', user_agent: 'Mozilla/5.0 (jr@example.net)' },
    };
    const t = trace(ATTACKER_USER, elsewhere);
    t.deliveries = [{
      request: [{ url: 'https://hook.example/?e=JANE.ROE%2540EXAMPLE.ORG&p=%2B4915112345678', body: { phone: '4915112345678', name: 'jane roe', zip: '10115', note: 'Jane%20Roe' } }],
      attempt_log: [{ response: '{"echo":"Jane.Roe@Example.org","other":"someone.else%40mail.example","plus":"+49 151 1234 5678"}' }],
    }];
    const text = JSON.stringify(maskTraceIdentifiers(t));
    for (const clear of ['jane.roe', 'jr@', 'jr%40', '4915112345678', '1234 5678', '12345678', 'Jane Roe', 'Jane+Roe', 'Jane%20Roe', '10115', 'someone.else', 'Germany']) {
      expect(text.toLowerCase(), clear).not.to.contain(clear.toLowerCase());
    }
    expect(text).to.contain('https://shop.example/thanks?email=[masked]');
    expect(text).to.contain('ORD-100000123');
  });

  it('leaves a long string without an e-mail as it is (every part of the e-mail pattern is bounded: linear, not quadratic)', () => {
    const long = 'a'.repeat(400_000);
    const masked = maskTraceIdentifiers(trace({ id: 'crm-77' }, { context: { note: long, other: `${'b.'.repeat(100_000)}x` } })) as any;
    expect(masked.event.payload.context.note).to.equal(long);
  });

  it('documents its visible fields and recognises identifier shapes', () => {
    expect(VISIBLE_USER_FIELDS).to.include.members(['id', 'external_id', 'country']);
    for (const s of ['a@b.example', 'a%40b.example', 'a%2540b.example', '+49 151 1234 5678', '015112345678']) expect(looksLikeIdentifier(s), s).to.equal(true);
    for (const s of ['crm-77', 'DE', 'ORD-1234', '12345678', 'a@b']) expect(looksLikeIdentifier(s), s).to.equal(false);
  });
});
