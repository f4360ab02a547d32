// hashUserFields: the user rules read when they may not see identifiers in clear.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { hashUserFields } from '../../src/identifiers/index.ts';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

describe('hashUserFields', () => {
  it('hashes every identifier field in place, key order kept, and keeps the other fields', () => {
    const out = hashUserFields({
      orders_total_number: 3, email: ' Jane@Example.com ', phone: '0722 123 456', first_name: 'Jane', last_name: 'Doe',
      street: '1 Main St', city: 'Cluj-Napoca', region: 'Cluj', postal_code: '400 001', country: 'Romania', id: 'C-1', external_id: 'X-9',
      properties: { tier: 'gold' },
    }, { defaultCountry: 'RO' });
    expect(Object.keys(out)).to.deep.equal([
      'orders_total_number', 'email', 'phone', 'first_name', 'last_name', 'street', 'city', 'region', 'postal_code', 'country', 'id', 'external_id', 'properties',
    ]);
    expect(out).to.include({ orders_total_number: 3, email: sha256('jane@example.com'), phone: sha256('+40722123456'), id: sha256('C-1'), country: sha256('ro') });
    expect(out.properties).to.deep.equal({ tier: 'gold' });
    for (const k of ['first_name', 'last_name', 'street', 'city', 'region', 'postal_code', 'external_id']) expect(out[k]).to.match(/^[0-9a-f]{64}$/);
  });

  it('uses the destination\'s normal forms, keeps lists as lists, passes hashes through and leaves unusable values out', () => {
    const hashed = sha256('someone@example.com');
    const out = hashUserFields({ email: ['A@x.com', hashed.toUpperCase()], phone: 'not a phone', first_name: '   ' },
      { forms: { email: { removeSpaces: true } }, defaultCountry: 'RO' });
    expect(out).to.deep.equal({ email: [sha256('a@x.com'), hashed] });
    expect(hashUserFields({ phone: '0722 123 456' }, { forms: { phone: 'digits' }, defaultCountry: 'RO' })).to.deep.equal({ phone: sha256('40722123456') });
  });
});
