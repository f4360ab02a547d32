// mapEventForDestination with a tiny plugin defined here, so the real plugins need not exist.
import { expect } from 'chai';
import ga4 from '../../plugins/ga4/index.ts';
import { deriveClientId } from '../../plugins/ga4/derived-client-id.ts';
import googleAds from '../../plugins/google-ads/index.ts';
import metaCapi from '../../plugins/meta-capi/index.ts';
import tiktok from '../../plugins/tiktok/index.ts';
import type { ConsentGate, DestinationPlugin, OutboundRequest } from '../../src/destinations/types.ts';
import { sha256Hex } from '../../src/identifiers/index.ts';
import { maskedSettings } from '../../src/pipeline/mask-request.ts';
import {
  BuildRequestsError,
  mapEventForDestination,
  NativeSchemaError,
  maskRequest,
  type DestinationInstance,
  type MapEventInput,
  type MapResult,
} from '../../src/pipeline/map-event.ts';
import type { RuleSpec } from '../../src/rules/types.ts';
import type { NormalizedEvent, Product } from '../../src/schema/types.ts';

const NOW = 1_700_000_000_500;
const RECEIVED = 1_700_000_000_123;
const ACCOUNT = { scriptId: 'AB12CD34', country: 'RO', host: 'https://shop.example' };
const TOKEN = 'EAAB/secret+token&x="y"';

const product = (id: string, price: number, quantity: number): Product => ({
  id, parent_id: id, name: `Product ${id}`, parent_name: `Product ${id}`, price_base: price, price,
  tax_included: true, tax_percent: 19, quantity, type: 'simple', stock_status: true,
});

function event(over: Partial<NormalizedEvent> = {}): NormalizedEvent {
  return {
    event: { name: 'checkout_completed', value: 59.9, currency: 'EUR', exchange_rate: 1, id: 'ORD-1' },
    context: { environment: 'prod', url: 'https://shop.example/thanks' },
    products: [product('A', 19.95, 2), product('B', 20, 1)],
    shipping: [],
    payments: [],
    coupons: [],
    user: { email: 'Jane@Example.com', phone: '0722 123 456' },
    consent: { analytics: true, personalization: true, marketing: true },
    cookies: [{ name: '_fbp', value: 'fb.1.1690000000000.987654321' }],
    ...over,
  };
}

/** A real plugin's data (name, consent, identifiers, attribution, match keys) on the echoing test plugin. */
const dataOf = (p: DestinationPlugin): Partial<DestinationPlugin> => ({
  name: p.name, category: p.category, consent: p.consent, identifiers: p.identifiers, attribution: p.attribution, matchKeys: p.matchKeys,
});

/** A plugin that echoes what it gets, so tests can see the items it was given. */
function plugin(over: Partial<DestinationPlugin> = {}): DestinationPlugin {
  return {
    name: 'test-ads',
    version: '1.0.0',
    category: 'advertising',
    consent: 'marketing',
    description: 'test double',
    settingsSchema: {},
    secretSettings: ['access_token'],
    // Meta's data: its identifiers, cookies and match keys.
    identifiers: metaCapi.identifiers,
    attribution: metaCapi.attribution,
    matchKeys: metaCapi.matchKeys,
    batch: { maxEvents: 2 },
    buildRequests: ({ settings, items, now }) => [{
      method: 'POST',
      url: `https://api.test/${String(settings.pixel_id)}/events?access_token=${encodeURIComponent(String(settings.access_token))}`,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${String(settings.access_token)}` },
      body: JSON.stringify({
        data: items.map((i) => ({ ...i.native.fields, event_id: i.eventId, user_data: i.identifiers, fbp: i.attribution.fbp })),
        token: settings.access_token,
        sent_at: now,
      }),
      eventIds: items.map((i) => i.eventId),
    }],
    classifyResponse: () => ({ outcome: 'success' }),
    ...over,
  };
}

const RULES: RuleSpec[] = [
  { id: 'test.purchase', event: 'checkout_completed', output: { event_name: 'Purchase', 'custom_data.value': { var: 'event.value' } } },
  { id: 'test.items', event: 'checkout_completed', output: { event_name: 'Items', 'custom_data.n': { sum: [{ var: 'products' }, 'quantity'] } } },
  { id: 'test.any', event: '*', output: { event_name: 'Any', settings: { var: 'settings' } } },
];

function input(over: Partial<MapEventInput> & { settings?: Record<string, unknown>; enabled?: boolean } = {}): MapEventInput {
  const p = over.plugin ?? plugin();
  const destination: DestinationInstance = over.destination ?? {
    id: 'dest-1',
    type: p.name,
    name: 'Test',
    enabled: over.enabled ?? true,
    settings: over.settings ?? { pixel_id: '123', access_token: TOKEN },
  };
  return { plugin: p, destination, event: event(), eventId: 'ORD-1', receivedAt: RECEIVED, account: ACCOUNT, rules: RULES, now: NOW, ...over };
}

function ready(r: MapResult) {
  if (r.status !== 'ready') throw new Error(`expected ready, got ${r.status}: ${r.message}`);
  return r;
}

describe('mapEventForDestination', () => {
  describe('consent gating', () => {
    const gates: ConsentGate[] = ['analytics', 'marketing', null];
    for (const analytics of [true, false]) {
      for (const marketing of [true, false]) {
        for (const consent of gates) {
          const delivered = consent === 'analytics' ? analytics : consent === 'marketing' ? marketing : true;
          it(`analytics=${analytics} marketing=${marketing}: consent ${consent} ${delivered ? 'delivered' : 'skipped'}`, () => {
            const r = mapEventForDestination(input({
              plugin: plugin({ consent, identifiers: consent === null ? null : metaCapi.identifiers }),
              event: event({ consent: { analytics, marketing, personalization: false } }),
            }));
            if (delivered) {
              expect(r.status).to.equal('ready');
            } else {
              const flag = consent;
              expect(r).to.deep.equal({ status: 'skipped', reason: 'consent', message: `test-ads: consent.${flag} is false; nothing sent`, warnings: [] });
            }
          });
        }
      }
    }

    it('consent_category overrides the plugin own consent flag, ungated webhooks included', () => {
      const noMarketing = event({ consent: { analytics: true, marketing: false, personalization: true } });
      const webhook = plugin({ category: 'webhook', consent: null, identifiers: null });
      const analytics = plugin({ category: 'analytics', consent: 'analytics' });
      const settings = (consent_category: string) => ({ pixel_id: '1', access_token: 't', consent_category });
      expect(mapEventForDestination(input({ plugin: webhook, event: noMarketing, settings: settings('marketing') })).status).to.equal('skipped');
      expect(mapEventForDestination(input({ plugin: webhook, event: noMarketing, settings: settings('analytics') })).status).to.equal('ready');
      expect(mapEventForDestination(input({ plugin: analytics, event: noMarketing, settings: settings('marketing') })).status).to.equal('skipped');
      const noAnalytics = event({ consent: { analytics: false, marketing: true, personalization: true } });
      expect(mapEventForDestination(input({ plugin: analytics, event: noAnalytics, settings: settings('marketing') })).status).to.equal('ready');
    });

    it('an unknown consent_category sends nothing', () => {
      const r = mapEventForDestination(input({ settings: { access_token: 't', consent_category: 'none' } }));
      expect(r).to.deep.include({ status: 'skipped', reason: 'consent', message: 'test-ads: consent_category "none" is not one of analytics, marketing, personalization; nothing sent' });
    });
  });

  describe('other gates, in order', () => {
    it('a disabled destination is skipped before anything else', () => {
      const r = mapEventForDestination(input({
        enabled: false,
        event: event({ context: { environment: 'dev' }, consent: { analytics: false, marketing: false, personalization: false } }),
      }));
      expect(r).to.deep.equal({ status: 'skipped', reason: 'disabled', message: 'test-ads: destination is disabled', warnings: [] });
    });

    it('context.environment dev delivers nothing, whatever the destination', () => {
      for (const category of ['analytics', 'advertising', 'webhook'] as const) {
        const r = mapEventForDestination(input({ plugin: plugin({ category }), event: event({ context: { environment: 'dev' } }) }));
        expect(r).to.deep.include({ status: 'skipped', reason: 'dev_environment' });
      }
    });

    it('the events allow-list is checked before consent', () => {
      const settings = { access_token: 't', events: ['lead_created'] };
      const r = mapEventForDestination(input({ settings, event: event({ consent: { analytics: false, marketing: false, personalization: false } }) }));
      expect(r).to.deep.equal({
        status: 'skipped', reason: 'not_allow_listed', message: "test-ads: checkout_completed is not in this destination's events allow-list", warnings: [],
      });
      const allowed = mapEventForDestination(input({ settings: { ...settings, events: ['lead_created', 'checkout_completed'] } }));
      expect(allowed.status).to.equal('ready');
    });

    it('a rule whose "when" fails or is false is condition_not_met, naming the rule and keeping the warnings', () => {
      const r = mapEventForDestination(input({ rules: [{ id: 'x', event: 'checkout_completed', when: { nope: 1 }, output: { a: 1 } }] }));
      expect(r).to.deep.equal({
        status: 'skipped',
        reason: 'condition_not_met',
        message: 'test-ads: rule x is written for checkout_completed, but produced no native event (its "when" condition was false, or it failed: see warnings); nothing sent',
        warnings: ['test-ads: rule x: "when" failed (Unrecognized operation nope); rule skipped'],
      });
      const two = mapEventForDestination(input({ rules: [
        { id: 'a', event: 'checkout_completed', when: false, output: { a: 1 } },
        { id: 'b', event: '*', when: { '==': [1, 2] }, output: { a: 1 } },
      ] }));
      expect(two).to.deep.include({ reason: 'condition_not_met' });
      expect((two as { message: string }).message).to.contain('rules a, b are written for checkout_completed');
    });

    it('no rule written for the event name (or only disabled ones) is no_matching_rule', () => {
      const r = mapEventForDestination(input({ rules: [
        { id: 'x', event: 'lead_created', output: { a: 1 } },
        { id: 'y', event: 'checkout_completed', disabled: true, output: { a: 1 } },
      ] }));
      expect(r).to.deep.equal({
        status: 'skipped', reason: 'no_matching_rule', message: 'test-ads: no rule is written for checkout_completed; nothing sent', warnings: [],
      });
    });
  });

  describe('ready', () => {
    it('one event becomes several native events, batched by maxEvents', () => {
      const r = ready(mapEventForDestination(input()));
      expect(r.items.map((i) => i.native.ruleId)).to.deep.equal(['test.purchase', 'test.items', 'test.any']);
      expect(r.requests).to.have.length(2);
      expect(r.requests.map((q) => q.eventIds)).to.deep.equal([['ORD-1', 'ORD-1'], ['ORD-1']]);
      const bodies = r.requests.map((q) => JSON.parse(q.body) as { data: Record<string, unknown>[]; sent_at: number });
      expect(bodies[0].data.map((d) => d.event_name)).to.deep.equal(['Purchase', 'Items']);
      expect(bodies[0].data[0].custom_data).to.deep.equal({ value: 59.9 });
      expect(bodies[0].data[1].custom_data).to.deep.equal({ n: 3 });
      expect(bodies[0].sent_at).to.equal(NOW);
    });

    it('items carry the event id, hashed identifiers, attribution and receivedAt', () => {
      const r = ready(mapEventForDestination(input()));
      const item = r.items[0];
      expect(item.eventId).to.equal('ORD-1');
      expect(item.receivedAt).to.equal(RECEIVED);
      expect(item.identifiers).to.deep.equal({
        'user_data.em': sha256Hex('jane@example.com'),
        'user_data.ph': sha256Hex('40722123456'),
      });
      expect(item.attribution).to.deep.include({ fbp: 'fb.1.1690000000000.987654321' });
      expect(item.event.event.id).to.equal('ORD-1');
    });

    it('rules see the settings without secrets; the plugin gets them all', () => {
      const r = ready(mapEventForDestination(input()));
      expect(r.items[2].native.fields.settings).to.deep.equal({ pixel_id: '123' });
      expect(JSON.parse(r.requests[1].body).token).to.equal(TOKEN);
    });

    it('attribution uses the account as client id salt and the measurement id for the session', () => {
      const ga = plugin(dataOf(ga4));
      const r = ready(mapEventForDestination(input({
        plugin: ga,
        settings: { measurement_id: 'G-BBB', api_secret: 's' },
        event: event({ cookies: [{ name: '_ga_AAA', value: 'GS1.1.1690000000.7.1' }, { name: '_ga_BBB', value: 'GS1.1.1700000000.2.1' }] }),
      })));
      expect(r.items[0].attribution.client_id).to.equal(deriveClientId('email:jane@example.com', 'AB12CD34'));
      expect(r.items[0].attribution.session_id).to.equal('1700000000');
      expect(r.items[0].identifiers['user_data.sha256_phone_number']).to.equal(sha256Hex('+40722123456'));
      expect(r.warnings).to.deep.equal(['ga4: no _ga cookie, client_id derived from the user']);
    });

    it('a plugin without identifiers gets none, and a custom table is used when given', () => {
      const none = ready(mapEventForDestination(input({ plugin: plugin({ category: 'webhook', consent: null, identifiers: null }) })));
      expect(none.items[0].identifiers).to.deep.equal({});
      const custom = ready(mapEventForDestination(input({
        plugin: plugin({ identifiers: { table: { hashed_mail: { from: 'email', normalise: 'email', hash: true } } } }),
      })));
      expect(custom.items[0].identifiers).to.deep.equal({ hashed_mail: sha256Hex('jane@example.com') });
    });

    it('a plugin that throws while building is a BuildRequestsError (not retryable)', () => {
      const broken = plugin({ buildRequests: () => { throw new Error('pixel_id missing'); } });
      expect(() => mapEventForDestination(input({ plugin: broken })))
        .to.throw(BuildRequestsError, 'test-ads: building the request failed: pixel_id missing')
        .with.property('retryable', false);
    });

    it('a rule output that fails the plugin nativeSchema is refused before building, naming the rule and the JSON path', () => {
      let built = 0;
      const strict = plugin({
        nativeSchema: {
          type: 'object', required: ['event_name'],
          properties: { event_name: { type: 'string' }, custom_data: { type: 'object', properties: { value: { type: 'number' } } } },
        },
        buildRequests: () => { built++; return []; },
      });
      const bad: RuleSpec[] = [{ id: 'test.bad-value', event: '*', output: { event_name: 'Purchase', 'custom_data.value': { cat: ['x', { var: 'event.value' }] } } }];
      for (const build of [true, false]) {
        expect(() => mapEventForDestination(input({ plugin: strict, rules: bad, build })))
          .to.throw(NativeSchemaError, 'test-ads: rule test.bad-value produced a native event the test-ads schema refuses (/custom_data/value: must be number); nothing sent')
          .with.property('retryable', false);
      }
      expect(built).to.equal(0);
      expect(ready(mapEventForDestination(input({ plugin: strict, rules: RULES.slice(0, 1) }))).items).to.have.length(1);
      expect(built, 'a conforming output is built').to.equal(1);
    });

    it('build: false (fan-out) maps the items and leaves building to the send lane', () => {
      let built = 0;
      const counting = plugin({ buildRequests: () => { built++; throw new Error('not now'); } });
      const r = ready(mapEventForDestination(input({ plugin: counting, build: false })));
      expect(built).to.equal(0);
      expect(r.requests).to.deep.equal([]);
      expect(r.items).to.have.length.greaterThan(0);
    });
  });

  describe('warnings', () => {
    const email = 'jane@example.com';

    it('meta: no match keys when email, phone, fbp and fbc are all missing', () => {
      const meta = plugin(dataOf(metaCapi));
      const bare = event({ user: { first_name: 'Jane' }, cookies: [] });
      expect(ready(mapEventForDestination(input({ plugin: meta, event: bare }))).warnings)
        .to.deep.equal(['meta-capi: no match keys — email, phone, fbp and fbc all missing']);
      const withFbc = event({ user: {}, cookies: [], context: { environment: 'prod', url: 'https://shop.example/?fbclid=IwAR1' } });
      expect(ready(mapEventForDestination(input({ plugin: meta, event: withFbc }))).warnings).to.deep.equal([]);
      expect(ready(mapEventForDestination(input({ plugin: meta, event: event({ cookies: [] }) }))).warnings).to.deep.equal([]);
    });

    it('tiktok: no match keys names ttp and ttclid', () => {
      const tt = plugin(dataOf(tiktok));
      const r = ready(mapEventForDestination(input({ plugin: tt, event: event({ user: {}, cookies: [] }) })));
      expect(r.warnings).to.deep.equal(['tiktok: no match keys — email, phone, ttp and ttclid all missing']);
    });

    it('identifier and cookie problems become sentences that never quote the value', () => {
      const meta = plugin(dataOf(metaCapi));
      const r = ready(mapEventForDestination(input({
        plugin: meta,
        account: { ...ACCOUNT, country: null },
        event: event({
          user: { email: 'not-an-email', phone: '12' },
          cookies: [{ name: '_fbp', value: 'garbage' }, { name: '_ga', value: 'also-garbage' }],
        }),
      })));
      expect(r.warnings).to.deep.equal([
        'meta-capi: cookie _fbp does not have the expected format; ignored',
        'meta-capi: user.email is not a valid email address; not sent',
        'meta-capi: user.phone is not a valid phone number (use international format or set the account country); not sent',
        'meta-capi: no match keys — email, phone, fbp and fbc all missing',
      ]);
      for (const w of r.warnings) expect(w).not.to.match(/not-an-email|garbage|\b12\b/);
    });

    it('a hashed value where the platform wants plain text is named, not quoted', () => {
      const ga = plugin(dataOf(ga4));
      const hashedCity = sha256Hex('bucharest');
      const r = ready(mapEventForDestination(input({
        plugin: ga,
        event: event({ user: { city: hashedCity }, cookies: [{ name: '_ga', value: 'GA1.1.111.222' }] }),
      })));
      expect(r.warnings).to.deep.equal(['ga4: user.city arrived hashed but ga4 needs it in plain text; not sent']);
      expect(r.items[0].identifiers).to.deep.equal({});
    });

    it('google-ads sees click-id conflicts, not GA cookie problems', () => {
      const ads = plugin(dataOf(googleAds));
      const r = ready(mapEventForDestination(input({
        plugin: ads,
        event: event({ cookies: [{ name: '_ga', value: 'junk' }], context: { environment: 'prod', url: 'https://s.example/?gbraid=a1&wbraid=b2' } }),
      })));
      expect(r.warnings).to.deep.equal(['google-ads: both gbraid and wbraid in the URL; only wbraid sent']);
    });

    it('rule warnings are prefixed with the destination type', () => {
      const r = ready(mapEventForDestination(input({
        rules: [...RULES, { id: 'test.bad', event: '*', output: { x: { object: ['a'] } } }],
      })));
      expect(r.warnings).to.deep.equal(['test-ads: rule test.bad: output "x" failed (object takes key/value pairs; got 1 arguments); no event from this rule']);
      for (const w of r.warnings) expect(w).not.to.include(email);
    });
  });
});

describe('maskRequest and maskedSettings', () => {
  it('replaces set secret settings by ****, leaving the rest (and the input) alone', () => {
    const p = plugin({ secretSettings: ['access_token', 'api_secret', 'unset'] });
    const settings = { pixel_id: '123', access_token: TOKEN, api_secret: 'sekrit' };
    expect(maskedSettings(p, settings)).to.deep.equal({ pixel_id: '123', access_token: '****', api_secret: '****' });
    expect(settings.access_token).to.equal(TOKEN);
  });

  it('masks declared secret-derived headers and credential headers whole; URL and body stay byte for byte', () => {
    const req: OutboundRequest = {
      method: 'POST',
      url: 'https://api.test/123/events?access_token=****',
      headers: { 'content-type': 'application/json', Authorization: 'Bearer ****', 'Access-Token': 'x', 'X-Signature': 'v1,abc', 'x-extra': 'kept' },
      body: '{"ua":"Linux x86_64","pixel":"123"}',
      eventIds: ['e1'],
    };
    expect(maskRequest(req, plugin({ secretHeaders: ['x-signature'] }))).to.deep.equal({
      method: 'POST',
      url: 'https://api.test/123/events?access_token=****',
      headers: { 'content-type': 'application/json', Authorization: '****', 'Access-Token': '****', 'X-Signature': '****', 'x-extra': 'kept' },
      body: '{"ua":"Linux x86_64","pixel":"123"}',
      eventIds: ['e1'],
    });
  });

  it('a build from masked settings carries **** where the secret goes and nowhere else, even for a one-character secret', () => {
    const p = plugin({ secretSettings: ['access_token'] });
    const r = ready(mapEventForDestination(input({ settings: maskedSettings(p, { pixel_id: '123', access_token: 'x' }) })));
    for (const req of r.requests) {
      const masked = maskRequest(req, p);
      expect(masked.url).to.equal('https://api.test/123/events?access_token=****');
      expect(masked.body).to.equal(req.body);
    }
  });
});
