import { expect } from 'chai';
import { identifierTest } from './identifier-like.ts';

const JANE = { id: 'crm-7001', email: 'jane.doe@example.com', phone: '0721 000 222', first_name: 'Jane', last_name: 'Doe', city: 'București', postal_code: '010101' };
const is = identifierTest(JANE);

describe('ga4 identifier-like text', () => {
  it('finds e-mails however they are spelled: encoded once, twice, three times, fullwidth, with a stray bad escape', () => {
    for (const text of [
      'jane.doe@example.com', 'jane.doe%40example.com', 'jane.doe%2540example.com', 'jane.doe%252540example.com',
      'jane.doe＠example.com', 'jane.doe﹫example.com', 'jane.doe％40example.com', 'jane.doe%EF%BC%A0example.com', 'jane.doe%40example.com%ZZ', 'write to ion@example.net',
    ]) expect(is(text), text).to.equal(true);
  });

  it('refuses a text still percent-encoded after three decodings (nothing legitimate is encoded that often)', () => {
    expect(is('jane.doe%25252540example.com')).to.equal(true);
    expect(is('100%25 cotton')).to.equal(false);
  });

  it('finds anyone\'s phone written as phones are (9 or more digits), but only formatted ones in a user agent', () => {
    for (const text of ['+40 744 555 666', '0744555666', '(0744) 555-666', '0744.555.666', 'call +1 202 555 0143 today', '+40744555666']) {
      expect(is(text), text).to.equal(true);
    }
    expect(is('0744555666', 'formatted')).to.equal(false);
    expect(is('bot; +40 744 555 666', 'formatted')).to.equal(true);
    expect(is('5123456789012', 'none')).to.equal(false);
  });

  it('leaves versions, addresses, short numbers and numbers inside longer tokens alone', () => {
    for (const text of ['120.0.6099.109', '10.0.0.12', '12345678', 'SKU-123456789', 'ord_123456789', 'TP1A.220624.014', '2026-11-21']) {
      expect(is(text), text).to.equal(false);
    }
  });

  it('keeps real user agents, app builds included, and refuses one carrying a contact', () => {
    const kept = [
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/120.0.2210.91',
      'Mozilla/5.0 (Linux; Android 13; SM-S918B Build/TP1A.220624.014; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/120.0.6099.144 Mobile Safari/537.36',
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 312.0.0.22.114 (iPhone14,2; iOS 17_1_2; en_US; en; scale=3.00; 1170x2532; 547456789)',
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/441.0.0.23.64;FBBV/551234567;FBDV/iPhone14,2]',
      'Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0',
    ];
    for (const ua of kept) expect(is(ua, 'formatted'), ua).to.equal(false);
    expect(is('Mozilla/5.0 (compatible; LeadBot/1.0; +mailto:jane.doe@example.com)', 'formatted')).to.equal(true);
    expect(is('Mozilla/5.0 (compatible; LeadBot/1.0; +mailto:ion%40example.net)', 'formatted')).to.equal(true);
  });

  it('finds the user\'s own identifiers: names together in any order and spelling, postcode, city without accents, phone in any prefix', () => {
    for (const text of ['Jane Doe', 'doe-jane', 'JANE.DOE', 'referred by Jane Doe', 'JaneDoe', 'u/doejane92', 'Jane', 'doe', '010101', 'Bucuresti', 'BUCUREȘTI', 'CRM-7001', '+40721000222', 'ref 0040 721 000 222']) {
      expect(is(text), text).to.equal(true);
    }
    for (const text of ['Jane Austen', 'Doesburg', 'webinar', 'summer sale']) expect(is(text), text).to.equal(false);
    expect(is('LeadBot/0721000222', 'formatted'), 'the user\'s own phone, even glued and bare').to.equal(true);
    expect(is('0721000222', 'none'), 'the user\'s own phone as an id').to.equal(true);
  });

  it('does not match a user\'s values shorter than 3 characters, nor names when the user gave none', () => {
    expect(identifierTest({ id: '7', first_name: 'Al' })('7')).to.equal(false);
    expect(identifierTest(undefined)('Jane Doe')).to.equal(false);
  });
});
