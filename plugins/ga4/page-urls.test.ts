import { expect } from 'chai';
import { identifierTest } from './identifier-like.ts';
import { redactUrl } from './page-urls.ts';

const USER = { id: 'cust-4242', email: 'Ana@Example.com', phone: '+40 721 234 567', first_name: 'Ana', external_id: '7' };
const redact = (url: string) => redactUrl(url, identifierTest(USER));

describe('ga4 page URLs', () => {
  it('leaves a URL without identifiers byte for byte as given', () => {
    for (const url of ['https://shop.example.com', 'https://shop.example.com/p/mug?color=white&size=M#reviews', 'https://x.example/a%2Fb?q=%E2%82%AC', '/relative?x=1']) {
      expect(redact(url)).to.deep.equal({ url, redacted: false });
    }
  });

  it('redacts e-mails (plain, percent-encoded or with + for spaces) in the query, path and fragment', () => {
    expect(redact('https://s.example/?e=jane%40example.com&utm_source=mail').url).to.equal('https://s.example/?e=(redacted)&utm_source=mail');
    expect(redact('https://s.example/u/jane@example.com/orders').url).to.equal('https://s.example/u/(redacted)/orders');
    expect(redact('https://s.example/#to=jane+doe@example.com').url).to.equal('https://s.example/#to=(redacted)');
    expect(redact('https://s.example/?jane@example.com').url).to.equal('https://s.example/?(redacted)');
  });

  it('redacts a SHA-256 hash and the user\'s own id, e-mail and phone in any prefix', () => {
    expect(redact(`https://s.example/c/${'ab'.repeat(32)}`)).to.deep.equal({ url: 'https://s.example/c/(redacted)', redacted: true });
    expect(redact('https://s.example/account/CUST-4242').url).to.equal('https://s.example/account/(redacted)');
    expect(redact('https://s.example/?tel=0040721234567&x=0721-234-567').url).to.equal('https://s.example/?tel=(redacted)&x=(redacted)');
  });

  it('does not match values shorter than 3 characters (an id 7 is not a page path)', () => {
    expect(redact('https://s.example/page/7?n=7').redacted).to.equal(false);
  });

  it('leaves out the userinfo, whatever it holds, and redacts a host that is an e-mail', () => {
    const jane = (url: string) => redactUrl(url, identifierTest({ first_name: 'Jane', last_name: 'Doe' }));
    expect(jane('https://jane.doe%40example.com:x@shop.example/thanks?step=2')).to.deep.equal({ url: 'https://shop.example/thanks?step=2', redacted: true });
    expect(jane('https://admin:hunter2@shop.example/')).to.deep.equal({ url: 'https://shop.example/', redacted: true });
    expect(jane('//jane@shop.example/p').url).to.equal('//shop.example/p');
    expect(jane('https://shop.example@jane.doe%40example.com/').url).to.equal('https://(redacted)/');
    expect(jane('https://jane@shop.example\\@evil.example/').url).to.equal('https://shop.example(redacted)/');
  });

  it('decodes until stable and folds compatibility forms: %2540, %252540, a fullwidth @, a stray bad escape, an e-mail as a query name', () => {
    for (const [url, expected] of [
      ['https://s.example/?ref=jane.doe%2540example.com', 'https://s.example/?ref=(redacted)'],
      ['https://s.example/?ref=jane.doe%252540example.com', 'https://s.example/?ref=(redacted)'],
      ['https://s.example/?ref=jane.doe%25252540example.com', 'https://s.example/?ref=(redacted)'],
      ['https://s.example/?ref=jane.doe%EF%BC%A0example.com', 'https://s.example/?ref=(redacted)'],
      ['https://s.example/?ref=jane.doe%40example.com%ZZ', 'https://s.example/?ref=(redacted)'],
      ['https://s.example/?jane.doe%40example.com=1&x=2', 'https://s.example/?(redacted)=1&x=2'],
    ]) expect(redact(url).url, url).to.equal(expected);
  });

  it('redacts the user\'s full name, postcode and city, and anyone\'s phone; keeps other numbers', () => {
    const jane = (url: string) => redactUrl(url, identifierTest({ first_name: 'Jane', last_name: 'Doe', city: 'București', postal_code: '010101' })).url;
    expect(jane('https://s.example/u/doe-jane/?name=Jane+Doe&n=JAN%C3%89%20DOE&plan=pro')).to.equal('https://s.example/u/(redacted)/?name=(redacted)&n=(redacted)&plan=pro');
    expect(jane('https://s.example/?zip=010101&city=Bucuresti&tel=%2B40%20744%20555%20666&p=(0744)+555-666')).to.equal('https://s.example/?zip=(redacted)&city=(redacted)&tel=(redacted)&p=(redacted)');
    const kept = 'https://s.example/p/SKU-123456789?v=120.0.6099.109&d=2026-11-21&n=12345678&q=Jane+Austen';
    expect(redactUrl(kept, identifierTest({ first_name: 'Jane', last_name: 'Doe' }))).to.deep.equal({ url: kept, redacted: false });
  });

  it('keeps a malformed percent-escape as it is', () => {
    expect(redact('https://s.example/?q=%E2%ZZ')).to.deep.equal({ url: 'https://s.example/?q=%E2%ZZ', redacted: false });
  });
});
