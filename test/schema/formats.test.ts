// The payload's string formats and the ISO 4217 lookup.
import { expect } from 'chai';
import { isCurrencyCode } from '../../src/schema/currencies.ts';
import { eventIdProblem, PAYLOAD_FORMATS, parseNumericString, parseTimestamp } from '../../src/schema/formats.ts';

const HASH = 'b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9';

describe('payload formats', () => {
  it('knows the ISO 4217 list, case-insensitively, and nothing else', () => {
    for (const ok of ['EUR', 'USD', 'RON', 'JPY', 'CHF', 'eur', 'Ron']) expect(isCurrencyCode(ok), ok).to.equal(true);
    for (const bad of ['EUX', 'EURO', 'EU', '', ' EUR', 'RUR', '€', 'BTC']) expect(isCurrencyCode(bad), bad).to.equal(false);
  });

  it('says what is wrong with an event.id', () => {
    expect(eventIdProblem('ORD-1')).to.equal(null);
    expect(eventIdProblem('Comandă 1/2024')).to.equal(null);
    expect(eventIdProblem('😀'.repeat(128))).to.equal(null); // 128 characters, 256 UTF-16 units
    expect(eventIdProblem('')).to.include('empty');
    expect(eventIdProblem('x'.repeat(129))).to.include('at most 128');
    expect(eventIdProblem('a\u0000b')).to.include('control');
    expect(eventIdProblem('a\u0085b')).to.include('control');
    expect(eventIdProblem('a\ud800b')).to.include('control');
    expect(eventIdProblem(' a')).to.include('whitespace');
    expect(eventIdProblem('a\u00a0')).to.include('whitespace');
  });

  const cases: Record<string, [ok: string[], bad: string[]]> = {
    'ip-address': [['203.0.113.7', '2001:db8::1', '::1', '::ffff:192.0.2.1'], ['999.1.1.1', '1.2.3', 'localhost', '', ' 1.2.3.4']],
    'http-url': [['https://shop.example.com', 'http://x.example/a?b=c#d', 'HTTPS://X.EXAMPLE'],
      ['ftp://x.example', '/cart', 'shop.example.com', 'https://', 'https:// x', 'javascript:alert(1)', 'mailto:a@b.c']],
    'email-or-sha256': [['a@b.co', ' a.b+c@sub.example.ro ', 'ion@exämple.ro', HASH, HASH.toUpperCase()],
      ['a@b', 'a@@b.co', 'a b@c.de', 'a@.com', 'a@b..c', '', 'x'.repeat(250) + '@b.co']],
    'phone-or-sha256': [['+40721234567', '0721 234 567', '(0721) 234.567', '+40-721-234-567', '12345', HASH],
      ['1234', 'call me', '+40 721 ext 5', '', '----']],
    'numeric-string': [['19', ' 9.5 ', '-1', '.5', '0'], ['abc', '', '19%', '1,5', '1e3']],
    'timestamp': [['1700000000000', '2024-01-31', '2024-01-31T10:00:00Z', '2024-01-31T10:00:00.123+02:00'],
      ['yesterday', '', '2024-13-45', '31/01/2024', '-5']],
  };
  for (const [name, [ok, bad]] of Object.entries(cases)) {
    it(`${name}: accepts ${ok.length} forms, refuses ${bad.length}`, () => {
      const { validate } = PAYLOAD_FORMATS[name as keyof typeof PAYLOAD_FORMATS];
      for (const s of ok) expect(validate(s), JSON.stringify(s)).to.equal(true);
      for (const s of bad) expect(validate(s), JSON.stringify(s)).to.equal(false);
    });
  }

  it('parses numeric strings and timestamps', () => {
    expect(parseNumericString(' 19 ')).to.equal(19);
    expect(parseNumericString('x')).to.equal(null);
    expect(parseTimestamp('1700000000000')).to.equal(1700000000000);
    expect(parseTimestamp('2024-01-31T00:00:00Z')).to.equal(Date.UTC(2024, 0, 31));
    expect(parseTimestamp('soon')).to.equal(null);
  });
});
