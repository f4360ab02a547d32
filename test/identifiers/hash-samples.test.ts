// Hash samples: every expected digest is computed here from a normalised string written
// by hand, never from the code under test.
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { hashIdentifiers, type IdentifierUser } from '../../src/identifiers/index.ts';
import { SPECS, type Family } from '../pipeline/plugin-specs.ts';

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

interface Sample {
  what: string;
  platform: Family;
  user: IdentifierUser;
  field: string;
  /** The normalised string, written literally. */
  normalised: string;
  defaultCountry?: string;
}

const samples: Sample[] = [
  // e-mail
  { what: 'gmail dots dropped for Google', platform: 'google', user: { email: ' John.Doe@Gmail.com ' }, field: 'user_data.sha256_email_address', normalised: 'johndoe@gmail.com' },
  { what: 'gmail dots kept for Meta', platform: 'meta', user: { email: ' John.Doe@Gmail.com ' }, field: 'user_data.em', normalised: 'john.doe@gmail.com' },
  { what: 'gmail dots kept for TikTok', platform: 'tiktok', user: { email: ' John.Doe@Gmail.com ' }, field: 'user.email', normalised: 'john.doe@gmail.com' },
  { what: 'googlemail dots dropped for Google, domain kept', platform: 'google', user: { email: 'Jane.Doe@GoogleMail.com' }, field: 'user_data.sha256_email_address', normalised: 'janedoe@googlemail.com' },
  { what: 'googlemail untouched for Meta', platform: 'meta', user: { email: 'Jane.Doe@GoogleMail.com' }, field: 'user_data.em', normalised: 'jane.doe@googlemail.com' },
  { what: 'non-gmail dots kept for Google', platform: 'google', user: { email: 'First.Last@Example.com' }, field: 'user_data.sha256_email_address', normalised: 'first.last@example.com' },
  { what: 'gmail +tag kept for Google', platform: 'google', user: { email: 'john.doe+shop@gmail.com' }, field: 'user_data.sha256_email_address', normalised: 'johndoe+shop@gmail.com' },
  { what: 'inner spaces removed for Google', platform: 'google', user: { email: '  jo hn@EXAMPLE.com' }, field: 'user_data.sha256_email_address', normalised: 'john@example.com' },
  // phone
  { what: 'RO national, default RO, Google +', platform: 'google', user: { phone: '0722 123 456' }, field: 'user_data.sha256_phone_number', normalised: '+40722123456', defaultCountry: 'RO' },
  { what: 'RO national, default RO, Meta digits', platform: 'meta', user: { phone: '0722 123 456' }, field: 'user_data.ph', normalised: '40722123456', defaultCountry: 'RO' },
  { what: 'RO international punctuated, TikTok +', platform: 'tiktok', user: { phone: '+40 (722) 123-456' }, field: 'user.phone', normalised: '+40722123456' },
  { what: 'RO international punctuated, Meta digits', platform: 'meta', user: { phone: '+40 (722) 123-456' }, field: 'user_data.ph', normalised: '40722123456', defaultCountry: 'US' },
  { what: 'US national, default US, Google', platform: 'google', user: { phone: '(415) 555-0123' }, field: 'user_data.sha256_phone_number', normalised: '+14155550123', defaultCountry: 'US' },
  { what: 'US national, default US, Meta', platform: 'meta', user: { phone: '(415) 555-0123' }, field: 'user_data.ph', normalised: '14155550123', defaultCountry: 'US' },
  { what: '00 prefix, default RO, Google', platform: 'google', user: { phone: '0044 20 7946 0958' }, field: 'user_data.sha256_phone_number', normalised: '+442079460958', defaultCountry: 'RO' },
  { what: '00 prefix, default US (IDD 011), Meta', platform: 'meta', user: { phone: '0044 20 7946 0958' }, field: 'user_data.ph', normalised: '442079460958', defaultCountry: 'US' },
  { what: 'national number read with the user country first', platform: 'tiktok', user: { phone: '(415) 555-0123', country: 'United States' }, field: 'user.phone', normalised: '+14155550123', defaultCountry: 'RO' },
  // names
  { what: 'accent kept, lowercased', platform: 'google', user: { first_name: 'José' }, field: 'user_data.address.sha256_first_name', normalised: 'josé' },
  { what: 'decomposed accent composed (NFC)', platform: 'meta', user: { first_name: 'Jose\u0301' }, field: 'user_data.fn', normalised: 'jos\u00e9' },
  { what: 'German ß kept', platform: 'meta', user: { last_name: 'Großmann' }, field: 'user_data.ln', normalised: 'großmann' },
  { what: 'Romanian ș trimmed', platform: 'google', user: { first_name: ' Ștefan ' }, field: 'user_data.address.sha256_first_name', normalised: 'ștefan' },
  { what: 'Romanian ț uppercase', platform: 'tiktok', user: { last_name: 'ȚUȚEA' }, field: 'user.last_name', normalised: 'țuțea' },
  { what: 'punctuation removed for Meta', platform: 'meta', user: { last_name: "O'Brien-Smith" }, field: 'user_data.ln', normalised: 'obriensmith' },
  { what: 'digits and symbols removed for Google, spaces collapsed', platform: 'google', user: { first_name: 'Anne   Marie 2!' }, field: 'user_data.address.sha256_first_name', normalised: 'anne marie' },
  { what: 'TikTok only trims and lowercases', platform: 'tiktok', user: { first_name: " Mary-Ann O'Neil " }, field: 'user.first_name', normalised: "mary-ann o'neil" },
  // address, Meta
  { what: 'Meta city without spaces', platform: 'meta', user: { city: 'San Francisco' }, field: 'user_data.ct', normalised: 'sanfrancisco' },
  { what: 'Meta city without punctuation, UTF-8 kept', platform: 'meta', user: { city: 'Târgu-Mureș' }, field: 'user_data.ct', normalised: 'târgumureș' },
  { what: 'Meta US state name to code', platform: 'meta', user: { region: 'California', country: 'US' }, field: 'user_data.st', normalised: 'ca' },
  { what: 'Meta non-US region squashed', platform: 'meta', user: { region: 'Bistrița-Năsăud', country: 'RO' }, field: 'user_data.st', normalised: 'bistrițanăsăud' },
  { what: 'Meta US ZIP+4 to 5 digits', platform: 'meta', user: { postal_code: '94103-1234', country: 'United States' }, field: 'user_data.zp', normalised: '94103' },
  { what: 'Meta US ZIP+4 to 5 digits without a country', platform: 'meta', user: { postal_code: '94103-1234' }, field: 'user_data.zp', normalised: '94103' },
  { what: 'Meta UK postcode lowercased, no space', platform: 'meta', user: { postal_code: 'SW1A 1AA', country: 'GB' }, field: 'user_data.zp', normalised: 'sw1a1aa' },
  { what: 'Meta country name', platform: 'meta', user: { country: 'Romania' }, field: 'user_data.country', normalised: 'ro' },
  { what: 'Meta country long English name', platform: 'meta', user: { country: 'United States' }, field: 'user_data.country', normalised: 'us' },
  { what: 'Meta country German name', platform: 'meta', user: { country: 'Deutschland' }, field: 'user_data.country', normalised: 'de' },
  { what: 'Meta country alpha-3', platform: 'meta', user: { country: 'DEU' }, field: 'user_data.country', normalised: 'de' },
  { what: 'Meta country upper alpha-2', platform: 'meta', user: { country: ' RO ' }, field: 'user_data.country', normalised: 'ro' },
  // others
  { what: 'Meta external id trimmed and lower-cased, as Meta\'s SDK does', platform: 'meta', user: { id: ' C-1042 ' }, field: 'user_data.external_id', normalised: 'c-1042' },
  { what: 'TikTok external id prefers external_id', platform: 'tiktok', user: { id: 'C-1', external_id: 'crm-77' }, field: 'user.external_id', normalised: 'crm-77' },
  { what: 'TikTok zip lowercased without spaces', platform: 'tiktok', user: { postal_code: '400 001' }, field: 'user.zip_code', normalised: '400001' },
  { what: 'Google street keeps numbers, drops punctuation', platform: 'google', user: { street: 'Str. Lungă nr. 12' }, field: 'user_data.address.sha256_street', normalised: 'str lungă nr 12' },
  { what: 'numeric phone value', platform: 'meta', user: { phone: 40722123456 }, field: 'user_data.ph', normalised: '40722123456', defaultCountry: 'RO' },
];

describe('identifier hash samples', () => {
  it('has at least 30 samples', () => {
    expect(samples.length).to.be.at.least(30);
  });

  for (const s of samples) {
    it(`${s.platform}: ${s.what}`, () => {
      const out = hashIdentifiers(s.user, SPECS[s.platform], { defaultCountry: s.defaultCountry });
      expect(out.warnings).to.deep.equal([]);
      expect(out.fields[s.field]).to.equal(sha(s.normalised));
    });
  }

  describe('pre-hashed values', () => {
    it('passes an uppercase SHA-256 through lowercased, not hashed again', () => {
      const digest = sha('john@example.com');
      const out = hashIdentifiers({ email: digest.toUpperCase() }, SPECS.meta);
      expect(out.fields['user_data.em']).to.equal(digest);
      expect(out.fields['user_data.em']).to.not.equal(sha(digest));
    });

    it('passes a pre-hashed phone through for every platform', () => {
      const digest = sha('+40722123456');
      expect(hashIdentifiers({ phone: ` ${digest} ` }, SPECS.google).fields['user_data.sha256_phone_number']).to.equal(digest);
      expect(hashIdentifiers({ phone: digest }, SPECS.tiktok).fields['user.phone']).to.equal(digest);
      expect(hashIdentifiers({ phone: digest }, SPECS.meta).fields['user_data.ph']).to.equal(digest);
    });
  });

  describe('plain (not hashed) fields', () => {
    it('Google address fields are sent normalised but in plain text', () => {
      const out = hashIdentifiers(
        { city: 'San Francisco 2', region: 'CA', postal_code: ' 94103-1234. ', country: 'United States' },
        SPECS.google,
      );
      expect(out.fields).to.deep.equal({
        'user_data.address.city': 'san francisco',
        'user_data.address.region': 'ca',
        'user_data.address.postal_code': '94103-1234',
        'user_data.address.country': 'US',
      });
    });

    it('TikTok city, state and country are plain; zip is hashed', () => {
      const out = hashIdentifiers({ city: 'Cluj-Napoca', region: 'Cluj', country: 'Romania', postal_code: '400001' }, SPECS.tiktok);
      expect(out.fields).to.deep.equal({
        'user.city': 'clujnapoca',
        'user.state': 'cluj',
        'user.zip_code': sha('400001'),
        'user.country': 'ro',
      });
    });

    it('GA4 user_id is the plain customer id', () => {
      expect(hashIdentifiers({ id: ' C-1042 ' }, SPECS.google).fields).to.deep.equal({ user_id: 'C-1042' });
    });
  });
});
