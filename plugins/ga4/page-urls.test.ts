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

  it('keeps a malformed percent-escape as it is', () => {
    expect(redact('https://s.example/?q=%E2%ZZ')).to.deep.equal({ url: 'https://s.example/?q=%E2%ZZ', redacted: false });
  });
});
