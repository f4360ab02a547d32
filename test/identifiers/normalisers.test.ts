import { expect } from 'chai';
import {
  normaliseCity,
  normaliseCountry,
  normaliseEmail,
  normaliseExternalId,
  normaliseName,
  normalisePhone,
  normalisePostalCode,
  normaliseRegion,
  normaliseStreet,
  resolveCountry,
  toE164,
} from '../../src/identifiers/index.ts';
import { SPECS } from '../pipeline/plugin-specs.ts';

const form = (family: keyof typeof SPECS) => SPECS[family].forms ?? {};

describe('normalisers', () => {
  describe('email', () => {
    it('applies the gmail rule only for Google', () => {
      expect(normaliseEmail('J.O.H.N@gmail.com', form('google').email)).to.equal('john@gmail.com');
      expect(normaliseEmail('J.O.H.N@gmail.com', form('meta').email)).to.equal('j.o.h.n@gmail.com');
      expect(normaliseEmail('J.O.H.N@gmail.com', form('tiktok').email)).to.equal('j.o.h.n@gmail.com');
    });

    it('rejects values that are not addresses', () => {
      for (const bad of ['', 'john', 'john@', '@gmail.com', 'john@gmail', 'jo hn@gmail.com']) {
        expect(normaliseEmail(bad, form('meta').email), bad).to.equal(null);
      }
    });
  });

  describe('phone', () => {
    it('formats per platform', () => {
      expect(normalisePhone('+40 722 123 456', form('google').phone)).to.equal('+40722123456');
      expect(normalisePhone('+40 722 123 456', form('tiktok').phone)).to.equal('+40722123456');
      expect(normalisePhone('+40 722 123 456', form('meta').phone)).to.equal('40722123456');
    });

    it('reads national, 00-prefixed and bare international numbers', () => {
      expect(toE164('0722.123.456', { defaultCountry: 'ro' })).to.equal('+40722123456');
      expect(toE164('00 40 722 123 456', { defaultCountry: 'DE' })).to.equal('+40722123456');
      expect(toE164('40722123456', { defaultCountry: 'US' })).to.equal('+40722123456');
      expect(toE164('011 44 20 7946 0958', { defaultCountry: 'US' })).to.equal('+442079460958');
    });

    it('returns null for unparseable numbers', () => {
      for (const bad of ['', 'abc', '12', '0722 123 456']) {
        expect(toE164(bad), bad).to.equal(null);
      }
      expect(toE164('123', { defaultCountry: 'RO' })).to.equal(null);
    });
  });

  describe('names, street, city, region', () => {
    it('keeps letters of any script', () => {
      expect(normaliseName('Ștefan-Țuțea', form('google').name)).to.equal('ștefanțuțea');
      expect(normaliseName('STRAßE', form('meta').name)).to.equal('straße');
      expect(normaliseName('Иван', form('tiktok').name)).to.equal('иван');
    });

    it('returns null when nothing is left', () => {
      expect(normaliseName('123 !!', form('google').name)).to.equal(null);
      expect(normaliseCity('   ', form('meta').city)).to.equal(null);
    });

    it('street keeps numbers', () => {
      expect(normaliseStreet('1600 Amphitheatre Pkwy.')).to.equal('1600 amphitheatre pkwy');
    });

    it('city per platform', () => {
      expect(normaliseCity('New York', form('google').city)).to.equal('new york');
      expect(normaliseCity('New York', form('meta').city)).to.equal('newyork');
      expect(normaliseCity('New York 10', form('tiktok').city)).to.equal('newyork10');
    });

    it('region: US names become codes for Meta only when the country allows it', () => {
      expect(normaliseRegion('New York', form('meta').region, { country: 'us' })).to.equal('ny');
      expect(normaliseRegion('New York', form('meta').region, {})).to.equal('ny');
      expect(normaliseRegion('Georgia', form('meta').region, { country: 'ge' })).to.equal('georgia');
      expect(normaliseRegion('New York', form('google').region, { country: 'us' })).to.equal('new york');
      expect(normaliseRegion(' New York ', form('tiktok').region)).to.equal('new york');
    });
  });

  describe('postal code', () => {
    it('per platform', () => {
      expect(normalisePostalCode('SW1A 1AA', form('google').postalCode)).to.equal('SW1A 1AA');
      expect(normalisePostalCode('1234.~', form('google').postalCode)).to.equal('1234');
      expect(normalisePostalCode('SW1A 1AA', form('tiktok').postalCode)).to.equal('sw1a1aa');
      expect(normalisePostalCode('00-950', form('meta').postalCode, { country: 'pl' })).to.equal('00950');
      expect(normalisePostalCode('02134', form('meta').postalCode, { country: 'us' })).to.equal('02134');
      expect(normalisePostalCode('94103 1234', form('meta').postalCode, { country: 'us' })).to.equal('94103');
    });
  });

  describe('country', () => {
    it('resolves codes, English names, variants and other languages', () => {
      const cases: Record<string, string | null> = {
        RO: 'ro', rou: 'ro', '642': 'ro', Romania: 'ro', România: 'ro', Rumänien: 'ro',
        'United States': 'us', 'United States of America': 'us', 'U.S.A.': 'us', America: 'us',
        UK: 'gb', 'Great Britain': 'gb', England: 'gb', Deutschland: 'de', Germany: 'de',
        'the netherlands': 'nl', Holland: 'nl', "Côte d'Ivoire": 'ci', 'cote divoire': 'ci',
        XX: null, Atlantis: null, '': null,
      };
      for (const [input, expected] of Object.entries(cases)) {
        expect(resolveCountry(input), input).to.equal(expected);
      }
    });

    it('is uppercase for Google, lowercase elsewhere', () => {
      expect(normaliseCountry('romania', form('google').country)).to.equal('RO');
      expect(normaliseCountry('romania', form('meta').country)).to.equal('ro');
      expect(normaliseCountry('romania', form('tiktok').country)).to.equal('ro');
    });
  });

  describe('external id', () => {
    it('trims; lower-cases for Meta (as its SDK does), keeps case elsewhere; refuses e-mails for Google', () => {
      expect(normaliseExternalId('  AbC-1 ', form('meta').externalId)).to.equal('abc-1');
      expect(normaliseExternalId('  AbC-1 ', form('tiktok').externalId)).to.equal('AbC-1');
      expect(normaliseExternalId('  AbC-1 ', form('google').externalId)).to.equal('AbC-1');
      expect(normaliseExternalId('a@b.com', form('google').externalId)).to.equal(null);
      expect(normaliseExternalId('a@b.com', form('tiktok').externalId)).to.equal('a@b.com');
    });
  });
});
