import { expect } from 'chai';
import { deriveClientId } from '../../plugins/ga4/derived-client-id.ts';
import { extractAttribution as extract, readAttribution, refineAttribution, type AttributionInput, type NamedAttributionSpec, type RefineContext } from '../../src/attribution/index.ts';
import { ATTRIBUTION_SPECS } from '../pipeline/plugin-specs.ts';

/** The extractor with every real plugin's spec, as the service runs it. */
const extractAttribution = (input: Omit<AttributionInput, 'specs'>) => extract({ ...input, specs: ATTRIBUTION_SPECS });

const NOW = 1_700_000_000_123;

describe('extractAttribution', () => {
  it('reads every cookie and URL parameter', () => {
    const out = extractAttribution({
      cookies: [
        { name: '_ga', value: 'GA1.1.123.456' },
        { name: '_ga_ABC123', value: 'GS2.1.s1700000000$o3$g1$t1700000500$j0$l0$h0' },
        { name: '_ga_OLD999', value: 'GS1.1.1690000000.7.1.1690000100.0.0.0' },
        { name: '_fbp', value: 'fb.1.1690000000000.987654321' },
        { name: '_fbc', value: 'fb.1.1690000000000.IwAR-cookie' },
        { name: '_ttp', value: '2Ab3cD4eF5gH6iJ7kL8mN9oP0qR' },
      ],
      url: 'https://shop.example/p/1?gclid=Cj0KCQiA_url&ttclid=E.C.P.CqgB&fbclid=IwAR-url',
      now: NOW,
    });
    expect(out).to.deep.equal({
      ids: {
        client_id: '123.456',
        client_id_source: 'cookie',
        ga_session_ids: { ABC123: '1700000000', OLD999: '1690000000' },
        session_id: '1700000000',
        fbp: 'fb.1.1690000000000.987654321',
        fbc: 'fb.1.1690000000000.IwAR-cookie',
        gclid: 'Cj0KCQiA_url',
        ttclid: 'E.C.P.CqgB',
        ttp: '2Ab3cD4eF5gH6iJ7kL8mN9oP0qR',
      },
      warnings: [],
    });
  });

  it('picks the session cookie of the given measurement id', () => {
    const cookies = [
      { name: '_ga', value: 'GA1.1.123.456' },
      { name: '_ga_ABC123', value: 'GS2.1.s1700000000$o3' },
      { name: '_ga_OLD999', value: 'GS1.1.1690000000.7.1' },
    ];
    expect(extractAttribution({ cookies, now: NOW, settings: { measurement_id: 'G-OLD999' } }).ids.session_id).to.equal('1690000000');
    expect(extractAttribution({ cookies, now: NOW, settings: { measurement_id: 'G-NOPE' } }).ids.session_id).to.equal(undefined);
  });

  it('builds fbc from fbclid when there is no _fbc cookie, keeping the fbclid case', () => {
    const out = extractAttribution({ url: 'https://shop.example/?fbclid=IwAR2AbCdEf', now: NOW, user: { id: 'C-1' } });
    expect(out.ids.fbc).to.equal('fb.1.1700000000123.IwAR2AbCdEf');
  });

  it('builds fbc from fbclid when the _fbc cookie is malformed', () => {
    const out = extractAttribution({
      cookies: [{ name: '_fbc', value: 'garbage' }],
      url: 'https://shop.example/?fbclid=IwAR2',
      now: NOW,
    });
    expect(out.ids.fbc).to.equal('fb.1.1700000000123.IwAR2');
    expect(out.warnings.map((w) => [w.field, w.code])).to.deep.include(['cookies._fbc', 'COOKIE_MALFORMED']);
  });

  it('takes gclid from _gcl_aw when the URL has none, and the URL when both do', () => {
    const cookies = [{ name: '_gcl_aw', value: 'GCL.1700000000.Cj0KCQiA_cookie' }];
    expect(extractAttribution({ cookies, now: NOW }).ids.gclid).to.equal('Cj0KCQiA_cookie');
    expect(extractAttribution({ cookies, url: 'https://a.example/?gclid=FromUrl', now: NOW }).ids.gclid).to.equal('FromUrl');
  });

  it('falls back to landing_url for click ids', () => {
    const out = extractAttribution({
      url: 'https://shop.example/checkout',
      landingUrl: 'https://shop.example/?ttclid=TT1&gclid=G1',
      now: NOW,
    });
    expect(out.ids).to.include({ ttclid: 'TT1', gclid: 'G1' });
  });

  it('keeps wbraid, not gbraid, when both are present', () => {
    const out = extractAttribution({ url: 'https://a.example/?gbraid=GB&wbraid=WB', now: NOW });
    expect(out.ids.wbraid).to.equal('WB');
    expect(out.ids).to.not.have.property('gbraid');
    expect(out.warnings.map((w) => w.code)).to.include('CLICK_ID_CONFLICT');
  });

  describe('client_id without _ga', () => {
    it('derives a stable id from user.id, with a warning', () => {
      const a = extractAttribution({ user: { id: 'C-1' }, now: NOW, salt: 'acct' });
      const b = extractAttribution({ user: { id: 'C-1', email: 'x@y.com' }, now: NOW + 5000, salt: 'acct' });
      expect(a.ids.client_id).to.match(/^\d+\.\d+$/);
      expect(a.ids.client_id).to.equal(b.ids.client_id);
      expect(a.ids.client_id).to.equal(deriveClientId('id:C-1', 'acct'));
      expect(a.ids.client_id_source).to.equal('derived');
      expect(a.warnings).to.deep.equal([
        {
          destination: 'ga4', field: 'cookies._ga', code: 'CLIENT_ID_DERIVED', message: 'no usable _ga cookie; GA4 client_id derived from the user',
          sentence: 'no _ga cookie, client_id derived from the user',
        },
      ]);
    });

    it('uses the e-mail (case-insensitive) when there is no id', () => {
      const a = extractAttribution({ user: { email: ' Ana@Example.com' }, now: NOW });
      const b = extractAttribution({ user: { email: 'ana@example.com' }, now: NOW });
      expect(a.ids.client_id).to.equal(b.ids.client_id);
      expect(a.ids.client_id).to.not.equal(extractAttribution({ user: { email: 'bob@example.com' }, now: NOW }).ids.client_id);
    });

    it('derives when _ga is malformed, and warns about both', () => {
      const out = extractAttribution({ cookies: [{ name: '_ga', value: 'GA1.1.x.y' }], user: { phone: '+40 722 123 456' }, now: NOW });
      expect(out.ids.client_id_source).to.equal('derived');
      expect(out.warnings.map((w) => w.code)).to.deep.equal(['COOKIE_MALFORMED', 'CLIENT_ID_DERIVED']);
    });

    it('gives no client_id when there is nothing to derive from', () => {
      const out = extractAttribution({ now: NOW });
      expect(out.ids).to.deep.equal({});
      expect(out.warnings.map((w) => w.code)).to.deep.equal(['CLIENT_ID_MISSING']);
    });
  });

  it('never throws on malformed input; each bad cookie is named in a warning', () => {
    const out = extractAttribution({
      cookies: [
        { name: '_ga', value: 'nonsense' },
        { name: '_ga_ABC', value: 'GS2.1.o3$g1' },
        { name: '_fbp', value: 'fb.1' },
        { name: '_fbc', value: 'fb.x.y.z' },
        { name: '_gcl_aw', value: 'GCL..' },
        { name: '_ttp', value: 'no spaces allowed here' },
        { name: 42, value: 'GA1.1.1.2' },
        { name: '_ga', value: { not: 'a string' } },
      ] as never,
      url: 'not a url',
      user: { id: 'C-1' },
      now: NOW,
    });
    expect(out.ids).to.deep.equal({ client_id: deriveClientId('id:C-1', 'tracklane'), client_id_source: 'derived' });
    expect(out.warnings.map((w) => w.field)).to.have.members([
      'context.url', 'cookies._ga', 'cookies._ga', 'cookies._ga_ABC', 'cookies._fbp', 'cookies._fbc', 'cookies._gcl_aw', 'cookies._ttp',
    ]);
  });

  it('accepts a name → value cookie map and the first valid of duplicate cookies', () => {
    expect(extractAttribution({ cookies: { _ga: 'GA1.2.11.22' }, now: NOW }).ids.client_id).to.equal('11.22');
    const dup = [{ name: '_ga', value: 'broken' }, { name: '_ga', value: 'GA1.1.5.6' }];
    const out = extractAttribution({ cookies: dup, now: NOW });
    expect(out.ids.client_id).to.equal('5.6');
    expect(out.warnings).to.deep.equal([]);
  });

  it('decodes a percent-encoded GS2 cookie', () => {
    const out = extractAttribution({ cookies: [{ name: '_ga', value: 'GA1.1.1.2' }, { name: '_ga_X', value: 'GS2.1.s1700000000%24o3%24g1' }], now: NOW });
    expect(out.ids.session_id).to.equal('1700000000');
  });
});

describe('readAttribution + refineAttribution (one reading per event, refined per destination)', () => {
  it('one reading refined for each destination gives what extracting for it alone gives, and is not changed by refining', () => {
    const base = {
      cookies: [
        { name: '_ga', value: 'GA1.1.123.456' },
        { name: '_ga_ABC123', value: 'GS2.1.s1700000000$o3' },
        { name: '_ga_OLD999', value: 'GS1.1.1690000000.7.1' },
        { name: '_fbp', value: 'not-a-fbp' },
      ],
      url: 'https://shop.example/?gclid=Cj0KCQiA_url&fbclid=IwAR-url', landingUrl: 'not a url',
      user: { id: 'C-1' }, now: NOW, salt: 'ACCT0001', specs: ATTRIBUTION_SPECS,
    };
    const reading = readAttribution(base);
    const before = JSON.stringify(reading.ids);
    for (const settings of [{ measurement_id: 'G-OLD999' }, { measurement_id: 'G-ABC123' }, {}, { pixel_id: '1' }]) {
      expect(refineAttribution(reading, { ...base, settings }), JSON.stringify(settings)).to.deep.equal(extract({ ...base, settings }));
    }
    expect(JSON.stringify(reading.ids), 'the reading is left as it was').to.equal(before);
  });
});

describe('refineAttribution: destinations of one event share a refinement where their settings agree', () => {
  const counting = (read: (ctx: RefineContext) => unknown) => {
    const calls: unknown[] = [];
    const specs: NamedAttributionSpec[] = [{ name: 'alpha', spec: { ids: {}, refine: (ctx: RefineContext) => { calls.push(read(ctx)); ctx.ids.seen = String(calls.length); } } }];
    return { calls, specs };
  };

  it('runs the steps once for destinations whose settings they do not read, and shares the result', () => {
    const { calls, specs } = counting(() => null);
    const input = { now: NOW, specs };
    const reading = readAttribution(input);
    const first = refineAttribution(reading, { ...input, settings: { pixel_id: '1' } });
    const second = refineAttribution(reading, { ...input, settings: { measurement_id: 'G-1' } });
    expect(calls).to.have.length(1);
    expect(second).to.equal(first);
    expect(second.ids).to.deep.equal({ seen: '1' });
  });

  it('runs them again when a setting they read differs, or when they looked at the settings otherwise', () => {
    const byValue = counting((ctx) => ctx.settings.measurement_id);
    const input = { now: NOW, specs: byValue.specs };
    const reading = readAttribution(input);
    refineAttribution(reading, { ...input, settings: { measurement_id: 'G-1', other: 1 } });
    refineAttribution(reading, { ...input, settings: { measurement_id: 'G-1', other: 2 } });
    refineAttribution(reading, { ...input, settings: { measurement_id: 'G-2' } });
    expect(byValue.calls).to.deep.equal(['G-1', 'G-2']);

    const byKeys = counting((ctx) => Object.keys(ctx.settings).join());
    const keysInput = { now: NOW, specs: byKeys.specs };
    const keysReading = readAttribution(keysInput);
    refineAttribution(keysReading, { ...keysInput, settings: { a: 1 } });
    refineAttribution(keysReading, { ...keysInput, settings: { a: 1 } });
    expect(byKeys.calls).to.deep.equal(['a', 'a']);
  });
});

describe('refine steps share one context per destination', () => {
  const specs: NamedAttributionSpec[] = [
    { name: 'alpha', spec: { ids: { a: [{ cookie: 'a' }] }, refine: (ctx: RefineContext) => { ctx.ids.b = 'from-alpha'; ctx.warn({ field: 'cookies.a', code: 'COOKIE_MALFORMED', message: 'alpha says' }); } } },
    { name: 'beta', spec: { ids: {}, refine: (ctx: RefineContext) => { ctx.ids.a = undefined; ctx.ids = { replaced: 'x' }; } } },
    { name: 'gamma', spec: { ids: {}, refine: (ctx: RefineContext) => { ctx.ids.c = `${ctx.ids.b}+gamma`; ctx.warn({ field: 'cookies.c', code: 'CLIENT_ID_DERIVED', message: 'gamma says' }); } } },
  ];
  it('tags each warning with the step that made it, drops ids a step unset, and ignores a replaced ids object', () => {
    const out = extract({ cookies: [{ name: 'a', value: 'v' }], now: NOW, specs });
    expect(out.ids).to.deep.equal({ b: 'from-alpha', c: 'from-alpha+gamma' });
    expect(Object.keys(out.ids)).to.deep.equal(['b', 'c']);
    expect(out.warnings.map((w) => [w.destination, w.code])).to.deep.equal([['alpha', 'COOKIE_MALFORMED'], ['gamma', 'CLIENT_ID_DERIVED']]);
  });
});
