import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { hashBatch } from '../../src/workers/hash-worker.ts';
import {
  NORMALISERS,
  createNormalMemo,
  hashIdentifiers,
  sourceFields,
  isSha256Hex,
  sha256Hex,
} from '../../src/identifiers/index.ts';
import type { User } from '../../src/schema/types.ts';
import { SPECS } from '../pipeline/plugin-specs.ts';

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

describe('hashIdentifiers', () => {
  it('accepts the validated User type', () => {
    const user: User = { id: 'C-1', email: 'a@b.com', properties: { tier: 'gold' } };
    expect(hashIdentifiers(user, SPECS.meta).fields['user_data.em']).to.equal(sha('a@b.com'));
  });

  it('returns nothing for a missing user', () => {
    expect(hashIdentifiers(undefined, SPECS.google)).to.deep.equal({ fields: {}, warnings: [] });
    expect(hashIdentifiers(null, SPECS.meta)).to.deep.equal({ fields: {}, warnings: [] });
  });

  it('builds the whole Meta user_data with native names', () => {
    const out = hashIdentifiers(
      { id: 'C-9', email: 'Ana@Example.com', phone: '0722 123 456', first_name: 'Ana', last_name: 'Pop', city: 'Iași', region: 'Iași', postal_code: '700001', country: 'Romania', orders_total_number: 3 } as never,
      SPECS.meta,
      { defaultCountry: 'RO' },
    );
    expect(out).to.deep.equal({
      fields: {
        'user_data.em': sha('ana@example.com'),
        'user_data.ph': sha('40722123456'),
        'user_data.fn': sha('ana'),
        'user_data.ln': sha('pop'),
        'user_data.ct': sha('iași'),
        'user_data.st': sha('iași'),
        'user_data.zp': sha('700001'),
        'user_data.country': sha('ro'),
        'user_data.external_id': sha('c-9'),
      },
      warnings: [],
    });
  });

  it('sends several e-mails as an array, deduplicated after normalisation, capped per platform', () => {
    const emails = ['a.b@gmail.com', 'ab@gmail.com', 'c@x.com', 'd@x.com', 'e@x.com'];
    const google = hashIdentifiers({ email: emails }, SPECS.google).fields['user_data.sha256_email_address'];
    expect(google).to.deep.equal([sha('ab@gmail.com'), sha('c@x.com'), sha('d@x.com')]);
    const meta = hashIdentifiers({ email: emails }, SPECS.meta).fields['user_data.em'];
    expect(meta).to.have.length(5);
  });

  it('warns without quoting the value when a phone cannot be read', () => {
    const out = hashIdentifiers({ phone: '12345' }, SPECS.meta, { defaultCountry: 'RO' });
    expect(out.fields).to.deep.equal({});
    expect(out.warnings).to.have.length(1);
    expect(out.warnings[0]).to.include({ field: 'user.phone', code: 'IDENTIFIER_INVALID' });
    expect(out.warnings[0].message).to.not.include('12345');
  });

  it('refuses a national phone number when no country is known', () => {
    const out = hashIdentifiers({ phone: '0722 123 456' }, SPECS.google);
    expect(out.fields).to.deep.equal({});
    expect(out.warnings[0].code).to.equal('IDENTIFIER_INVALID');
  });

  it('warns for an e-mail without @ and for an unknown country', () => {
    const out = hashIdentifiers({ email: 'not-an-email', country: 'Atlantis' }, SPECS.tiktok);
    expect(out.fields).to.deep.equal({});
    expect(out.warnings.map((w) => w.field)).to.deep.equal(['user.email', 'user.country']);
  });

  it('drops a pre-hashed value aimed at a plain-text field', () => {
    const out = hashIdentifiers({ city: sha('paris') }, SPECS.google);
    expect(out.fields).to.deep.equal({});
    expect(out.warnings[0]).to.include({ field: 'user.city', code: 'IDENTIFIER_HASHED_NOT_SENDABLE' });
  });

  it('keeps an e-mail out of GA4 user_id (PII)', () => {
    const out = hashIdentifiers({ id: 'jane@example.com' }, SPECS.google);
    expect(out.fields).to.deep.equal({});
    expect(out.warnings[0].field).to.equal('user.id');
    expect(out.warnings[0].message).to.not.include('jane');
  });

  it('reads the first source field with a usable value, skips blanks, and takes the first resolvable country', () => {
    const sha = (v: string) => createHash('sha256').update(v).digest('hex');
    // external_id only blank: the rule falls back to id; a number is read as its text.
    const out = hashIdentifiers({ external_id: ['  ', ''], id: 12345, email: ['', ' A@Example.com', 'a@example.com'],
      country: ['', 'Atlantis', 'Romania'], city: 'Cluj' } as never, SPECS.meta);
    expect(out.fields['user_data.external_id']).to.equal(sha('12345'));
    expect(out.fields['user_data.em']).to.equal(sha('a@example.com')); // the two e-mails are one after normalising
    expect(out.fields['user_data.country']).to.equal(sha('ro'));
    // external_id present: id is not read.
    expect(hashIdentifiers({ external_id: 'X-1', id: 'Y-2' }, SPECS.meta).fields['user_data.external_id']).to.equal(sha('x-1'));
  });

  it('ignores non-string, non-number values', () => {
    const out = hashIdentifiers({ email: { nested: true }, phone: [null, 7], first_name: NaN } as never, SPECS.meta);
    expect(out.fields).to.deep.equal({});
    expect(out.warnings.map((w) => w.field)).to.deep.equal(['user.phone']);
  });

  it('tables only name known normalisers, and the source list covers every field a table reads', () => {
    for (const spec of Object.values(SPECS)) {
      for (const rule of Object.values(spec.table)) {
        expect(NORMALISERS).to.have.property(rule.normalise);
        for (const from of typeof rule.from === 'string' ? [rule.from] : rule.from) {
          expect(sourceFields(spec.table)).to.include(from);
        }
      }
    }
  });
});

describe('sha256Hex / isSha256Hex', () => {
  it('hashes UTF-8 to lowercase hex', () => {
    expect(sha256Hex('abc')).to.equal('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('ș')).to.equal(sha('ș'));
  });

  it('recognises 64 hex characters in either case only', () => {
    expect(isSha256Hex('A'.repeat(64))).to.equal(true);
    expect(isSha256Hex('a'.repeat(63))).to.equal(false);
    expect(isSha256Hex('g'.repeat(64))).to.equal(false);
  });
});

describe('hashBatch: one normalisation and hash per normal form', () => {
  const users = [
    { id: 'C-1', email: ' Ana@Example.com ', phone: '0722 123 456', first_name: 'Ana', last_name: 'Pop', city: 'Iași', region: 'Iași', postal_code: '700001', country: 'Romania' },
    { id: 'C-2', email: 'not-an-email', phone: '12', country: 'DE' },
    { email: sha256Hex('b@c.com'), phone: '+49 30 1234567' },
  ];
  const specs = Object.values(SPECS);

  it('gives every destination exactly what it gets hashed on its own, warnings included', () => {
    const items = users.flatMap((user) => specs.map((spec) => ({ user: user as never, spec, defaultCountry: 'RO' })));
    const batched = hashBatch(items);
    items.forEach((it, i) => expect(batched[i], `item ${i}`).to.deep.equal(hashIdentifiers(it.user, it.spec, { defaultCountry: 'RO' })));
  });

  it('reuses a value across destinations that want the same form, and keeps forms apart', () => {
    const memo = createNormalMemo();
    for (const spec of specs) hashIdentifiers(users[0] as never, spec, { defaultCountry: 'RO', memo });
    const once = memo.size;
    for (const spec of specs) hashIdentifiers(users[0] as never, spec, { defaultCountry: 'RO', memo });
    expect(memo.size, 'nothing new the second time').to.equal(once);
    const fields = specs.reduce((n, spec) => n + Object.keys(hashIdentifiers(users[0] as never, spec, { defaultCountry: 'RO' }).fields).length, 0);
    const normalisations = [...memo.keys()].filter((k) => !k.startsWith('e164\u0000') && !k.startsWith('sha256\u0000')).length;
    expect(normalisations, 'fewer normalisations than fields sent').to.be.below(fields);
    expect([...memo.keys()].filter((k) => k.startsWith('e164\u0000')), 'the phone number parsed once for every form').to.have.length(1);
    const hashes = [...memo.keys()].filter((k) => k.startsWith('sha256\u0000')).length;
    expect(hashes, 'each normalised text hashed once, whichever forms gave it').to.equal(new Set([...memo.values()].filter((v) => v !== null && /^[0-9a-f]{64}$/.test(v))).size);
  });
});
