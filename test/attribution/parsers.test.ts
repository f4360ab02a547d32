import { expect } from 'chai';
import { deriveClientId } from '../../plugins/ga4/derived-client-id.ts';
import { parseGaClientId, parseGaSessionId } from '../../plugins/ga4/ga-cookies.ts';
import { parseGclAw } from '../../plugins/google-ads/attribution.ts';
import { buildFbc, parseFbc, parseFbp } from '../../plugins/meta-capi/meta-cookies.ts';
import { parseTtp } from '../../plugins/tiktok/attribution.ts';
import { cookieJar } from '../../src/attribution/index.ts';

describe('attribution parsers', () => {
  describe('_ga → client_id', () => {
    it('takes the last two parts', () => {
      expect(parseGaClientId('GA1.1.123.456')).to.equal('123.456');
      expect(parseGaClientId('GA1.2.1234567890.1700000000')).to.equal('1234567890.1700000000');
      expect(parseGaClientId(' GA1.3.987654321.1699999999 ')).to.equal('987654321.1699999999');
    });

    it('gives nothing for malformed values', () => {
      for (const bad of ['', 'GA1', 'GA1.1.123', 'GA1.1.abc.456', 'GA1.1.123.', 'XX1.1.123.456', 'GA1.1.0.456', 'GA1.1.-1.456', 'GA1.1.1.2.x']) {
        expect(parseGaClientId(bad), bad).to.equal(undefined);
      }
    });
  });

  describe('_ga_<container> → session_id', () => {
    it('reads GS1', () => {
      expect(parseGaSessionId('GS1.1.1700000000.3.1.1700000500.0.0.0')).to.equal('1700000000');
      expect(parseGaSessionId('GS1.1.1700000000')).to.equal('1700000000');
    });

    it('reads GS2, whatever the order of the $ fields', () => {
      expect(parseGaSessionId('GS2.1.s1700000000$o3$g1$t1700000500$j0$l0$h0')).to.equal('1700000000');
      expect(parseGaSessionId('GS2.1.o3$s1700000001$g0')).to.equal('1700000001');
    });

    it('gives nothing for malformed values', () => {
      for (const bad of ['', 'GS1', 'GS1.1.abc.3', 'GS2.1.o3$g1$t1700000500', 'GS2.1.sabc$o1', 'GS2.1.s$o1', 'GS3.1.s1700000000', 'GA1.1.123.456', 'GS1.1.0.1']) {
        expect(parseGaSessionId(bad), bad).to.equal(undefined);
      }
    });
  });

  describe('Meta _fbp / _fbc', () => {
    it('accepts the documented shapes unchanged', () => {
      expect(parseFbp('fb.1.1700000000000.1234567890')).to.equal('fb.1.1700000000000.1234567890');
      expect(parseFbc('fb.1.1700000000000.IwAR2F4-xbQ_abc')).to.equal('fb.1.1700000000000.IwAR2F4-xbQ_abc');
      expect(parseFbc('fb.2.1700000000000.IwAR2abc.AQ')).to.equal('fb.2.1700000000000.IwAR2abc.AQ');
    });

    it('gives nothing for malformed values', () => {
      for (const bad of ['', 'fb.1.1700000000000', 'fb.x.1700000000000.1', 'fp.1.1700000000000.1', 'fb.1.abc.1', 'fb.1.1700000000000.1.2']) {
        expect(parseFbp(bad), bad).to.equal(undefined);
      }
      for (const bad of ['', 'fb.1.1700000000000.', 'fb..1700000000000.abc', 'IwAR2abc', 'fb.1.1700000000000.a b']) {
        expect(parseFbc(bad), bad).to.equal(undefined);
      }
    });

    it('builds fbc from fbclid with subdomain index 1 and the given ms', () => {
      expect(buildFbc('IwAR2AbC', 1700000000123)).to.equal('fb.1.1700000000123.IwAR2AbC');
    });
  });

  describe('Google Ads _gcl_aw', () => {
    it('takes the third part', () => {
      expect(parseGclAw('GCL.1700000000.Cj0KCQiA_BwE')).to.equal('Cj0KCQiA_BwE');
    });

    it('gives nothing for malformed values', () => {
      for (const bad of ['', 'GCL', 'GCL.1700000000', 'GCL.1700000000.', 'GCL.abc.Cj0', 'XYZ.1700000000.Cj0']) {
        expect(parseGclAw(bad), bad).to.equal(undefined);
      }
    });
  });

  describe('TikTok _ttp', () => {
    it('accepts an id-like value', () => {
      expect(parseTtp('2Ab3cD4eF5gH6iJ7kL8mN9oP0qR')).to.equal('2Ab3cD4eF5gH6iJ7kL8mN9oP0qR');
    });

    it('gives nothing for malformed values', () => {
      for (const bad of ['', 'short', 'has space inside it', 'a;b=c;d=eeeeeee']) {
        expect(parseTtp(bad), bad).to.equal(undefined);
      }
    });
  });

  describe('derived client_id', () => {
    it('is two positive integers, stable per key and salt', () => {
      const a = deriveClientId('id:C-1', 'acct-1');
      expect(a).to.match(/^[1-9]\d*\.[1-9]\d{9}$/);
      expect(deriveClientId('id:C-1', 'acct-1')).to.equal(a);
      expect(deriveClientId('id:C-2', 'acct-1')).to.not.equal(a);
      expect(deriveClientId('id:C-1', 'acct-2')).to.not.equal(a);
    });
  });

  describe('cookie jar', () => {
    it('reads arrays and maps, skips non-strings, decodes percent-encoding', () => {
      const jar = cookieJar([
        { name: '_ga', value: 'GA1.1.1.2' },
        { name: '_ga', value: 'GA1.1.3.4' },
        { name: 'x', value: 42 },
        { value: 'orphan' },
        null as never,
        { name: '_ga_ABC', value: 'GS2.1.s1700000000%24o3' },
        { name: 'bad', value: '%E0%A4%A' },
      ]);
      expect(jar.all('_ga')).to.deep.equal(['GA1.1.1.2', 'GA1.1.3.4']);
      expect(jar.all('x')).to.deep.equal([]);
      expect(jar.withPrefix('_ga_')).to.deep.equal([{ name: '_ga_ABC', value: 'GS2.1.s1700000000$o3' }]);
      expect(jar.all('bad')).to.deep.equal(['%E0%A4%A']);
      expect(cookieJar({ _fbp: 'fb.1.1.1', n: 3 }).all('_fbp')).to.deep.equal(['fb.1.1.1']);
      expect(cookieJar(undefined).all('_ga')).to.deep.equal([]);
    });
  });
});
