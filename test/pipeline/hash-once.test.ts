// Endpoint 2 hashes each identifier of an event once: the destinations' identifier fields and
// what their rules read under `user.*` (GA4's rules read user.email and user.phone) share one
// memo per planning call, so e-mail and phone are not hashed again for the rules.
import { expect } from 'chai';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { startTestApp, type TestApp, type TestAccount } from '../helpers/test-app.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { createDestinationService } from '../../src/destinations/destination-service.ts';

const CONFIGS = {
  ga4: { measurement_id: 'G-TEST123', api_secret: 'ga4-secret-value' },
  'meta-capi': { pixel_id: '987654321', access_token: 'meta-token-value' },
};
const crypto = createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto');

const event = {
  event: { name: 'checkout_completed', id: 'ORD-HASH-ONCE', value: 120, currency: 'EUR' },
  context: { environment: 'prod', data_source: 'website', url: 'https://shop.example/thanks', user_agent: 'Mozilla/5.0', overide_ip: '203.0.113.7' },
  products: [{ id: 'SKU-1', name: 'Shoe', category: 'Shoes', price_base: 120, price: 110, tax_percent: 19 }],
  user: { email: 'Jane.Doe@Example.com', phone: '0722 123 456', first_name: 'Jane', last_name: 'Doe', city: 'Cluj', country: 'Romania' },
  consent: { analytics: true, personalization: true, marketing: true },
  cookies: [{ name: '_ga', value: 'GA1.1.1234567890.1700000000' }, { name: '_fbp', value: 'fb.1.1700000000000.42' }],
};

describe('endpoint 2 hashes each identifier once per event', () => {
  let s: TestApp;
  let a: TestAccount;
  const original = crypto.hash;
  let inputs: string[] | null = null;

  before(async () => {
    // Every one-shot SHA-256 in the process is seen while `inputs` is set (the identifiers'
    // sha256Hex and the message ids both use crypto.hash).
    crypto.hash = ((algorithm: string, data: string, ...rest: unknown[]) => {
      if (inputs !== null && algorithm === 'sha256') inputs.push(String(data));
      return (original as (...a: unknown[]) => string)(algorithm, data, ...rest);
    }) as typeof crypto.hash;
    syncBuiltinESMExports();
    s = await startTestApp();
    a = await s.account({ country: 'RO' });
    const svc = createDestinationService(s.running.store, s.running.plugins);
    for (const type of ['ga4', 'meta-capi'] as const) await svc.add(a.scriptId, type, CONFIGS[type]);
  });
  after(async () => {
    crypto.hash = original;
    syncBuiltinESMExports();
    await s.close();
  });

  it('one endpoint-2 request with GA4 and Meta hashes no value twice', async () => {
    await s.post(INTAKE_PATHS.test, { ...event, event: { ...event.event, id: 'ORD-WARM' } }, { account: a }); // loads what loads lazily
    inputs = [];
    const r = await s.post(INTAKE_PATHS.test, event, { account: a });
    const seen = inputs;
    inputs = null;
    expect(r.status).to.equal(200);
    expect(r.body.preview.map((p: { status: string }) => p.status)).to.deep.equal(['would_send', 'would_send']);
    // GA4's rules read the e-mail and the phone: they were hashed for them too.
    const ga4 = JSON.stringify(r.body.preview.find((p: { type: string }) => p.type === 'ga4').requests[0].body);
    expect(ga4).to.include(original('sha256', 'jane.doe@example.com', 'hex'));
    const counts = new Map<string, number>();
    for (const x of seen) counts.set(x, (counts.get(x) ?? 0) + 1);
    const twice = [...counts].filter(([, n]) => n > 1).map(([x, n]) => `${JSON.stringify(x)} × ${n}`);
    expect(twice, 'values hashed more than once').to.deep.equal([]);
    expect(seen).to.include.members(['jane.doe@example.com']);
  });
});
