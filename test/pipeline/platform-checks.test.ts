// What each shipped plugin declares for endpoint 2's `?validate=platform` (its
// `validationRequests`), planned as endpoint 2 plans it: the validation path with the real
// settings, or why there is none. Checks are built only when asked.
import { expect } from 'chai';
import { SPEC_EVENT_NAMES } from '../../src/accounts/types.ts';
import { loadPlugins } from '../../src/destinations/load-plugins.ts';
import { planPreview, type PlatformCheck, type PreviewInput } from '../../src/pipeline/preview-event.ts';
import { loadRules } from '../../src/rules/load-rules.ts';
import { usePluginRules } from '../../src/rules/plugin-rules.ts';
import type { NormalizedEvent } from '../../src/schema/types.ts';
import { validateEvent } from '../../src/schema/validate-event.ts';
import { checkout, SETTINGS } from '../delivery/delivery-fixture.ts';
import { shippedFolders } from '../helpers/shipped-folders.ts';

const BASE = 'https://platform.example';

describe('pipeline: each plugin\'s platform check (validationRequests)', () => {
  const { pluginsDir, rulesDir } = shippedFolders();

  async function checksFor(extra: Record<string, Record<string, unknown>> = {}, validate = true): Promise<Record<string, PlatformCheck | null>> {
    usePluginRules(rulesDir, pluginsDir);
    const loaded = loadRules(rulesDir);
    if (!loaded.ok) throw new Error('rules failed to load');
    const payload = checkout('ORD-C1', {
      context: { environment: 'prod', data_source: 'website', url: 'https://shop.example.com/thanks?gclid=Cj0KCQ-test', user_agent: 'Mozilla/5.0 test', overide_ip: '203.0.113.9' },
    });
    const v = validateEvent(payload, { approvedEvents: new Set(SPEC_EVENT_NAMES), defaultTaxRate: 19, host: null });
    const now = Date.now();
    const types = Object.keys(SETTINGS);
    const input: PreviewInput = {
      account: { scriptId: 'CHECK001', country: 'RO', host: null },
      destinations: types.map((type, i) => ({
        id: `dst_${String(i).padStart(16, '0')}`, scriptId: 'CHECK001', type, name: type, enabled: true,
        settings: { ...SETTINGS[type](BASE), ...extra[type] }, createdAt: now, updatedAt: now,
      })),
      event: v.event as NormalizedEvent, eventId: 'ORD-C1', receivedAt: now, now, validate,
    };
    const planned = await planPreview({ plugins: await loadPlugins(pluginsDir), rules: () => loaded.ruleSet, pool: null }, input);
    for (const p of planned.preview) expect(p.status, `${p.type}: ${p.message}`).to.equal('would_send');
    if (planned.checks === undefined) return {};
    return Object.fromEntries(planned.preview.map((p, i) => [p.type, planned.checks![i]]));
  }

  const requestsOf = (c: PlatformCheck | null) => {
    if (c === null || !('requests' in c)) throw new Error(`no requests: ${JSON.stringify(c)}`);
    return c.requests;
  };

  it('GA4, Google Ads, Snapchat and Pinterest: their validation paths, with the real secrets', async () => {
    const c = await checksFor();
    expect(requestsOf(c.ga4).map((r) => r.url)).to.deep.equal([`${BASE}/debug/mp/collect?measurement_id=G-TEST123&api_secret=ga-secret`]);
    const ads = requestsOf(c['google-ads']);
    expect(ads.map((r) => JSON.parse(r.body).validateOnly)).to.deep.equal([true]);
    expect(ads[0].headers.authorization).to.equal('Bearer ads-token');
    expect(requestsOf(c.snapchat).map((r) => r.url)).to.deep.equal([`${BASE}/v3/8f9e4d2c-1b3a-4c5d-9e8f-7a6b5c4d3e2f/events/validate?access_token=snap-token`]);
    expect(requestsOf(c.pinterest).map((r) => r.url)).to.deep.equal([`${BASE}/v5/ad_accounts/549755885175/events?test=true`]);
  });

  it('Meta, TikTok and Reddit: only with the destination\'s test code; LinkedIn, Microsoft and webhooks: none', async () => {
    const without = await checksFor();
    for (const type of ['meta-capi', 'tiktok', 'reddit']) {
      expect(without[type], type).to.have.property('unavailable').that.matches(/this destination has none: the request would record a real conversion$/);
    }
    expect(without.linkedin).to.deep.equal({ unavailable: 'linkedin has no test mode or validation path (the Conversions API has no test event code, sandbox or validation endpoint)' });
    expect(without['microsoft-ads']).to.have.property('unavailable').that.matches(/^microsoft-ads has no test mode or validation path/);
    expect(without.webhook).to.deep.equal({ unavailable: 'webhook has no way to check a request without acting on it' });

    const code = { test_event_code: 'TEST77' };
    const withCode = await checksFor({ 'meta-capi': code, tiktok: code, reddit: code });
    expect(JSON.parse(requestsOf(withCode['meta-capi'])[0].body).test_event_code).to.equal('TEST77');
    expect(JSON.parse(requestsOf(withCode.tiktok)[0].body).test_event_code).to.equal('TEST77');
    expect(JSON.parse(requestsOf(withCode.reddit)[0].body).data.test_id).to.equal('TEST77');
  });

  it('builds no check unless asked: no request with secrets in clear leaves the planner', async () => {
    expect(await checksFor({}, false)).to.deep.equal({});
  });
});
