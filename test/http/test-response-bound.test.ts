// The test endpoint's answer is bounded: a ~480 KB request to four destinations used to be
// answered with about nine times its size. Past 1 MiB, parts are elided with markers and a
// RESPONSE_TRUNCATED warning; what a developer needs (errors, warnings, every destination's
// status, URL and headers) stays whole.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { boundTestResponse, boundTestResponseText, TEST_RESPONSE_MAX_BYTES } from '../../src/http/bound-response.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { checkout, SETTINGS } from '../delivery/delivery-fixture.ts';

describe('http: the test endpoint answer is bounded', function () {
  this.timeout(20_000);
  let s: TestApp;
  before(async () => (s = await startTestApp()));
  after(async () => s.close());

  async function accountWithFourDestinations() {
    const account = await s.account({ host: 'https://shop.example.com', country: 'RO' });
    for (const type of ['ga4', 'meta-capi', 'tiktok', 'webhook']) {
      await s.running.store.destinations.add({
        id: `dst_${randomBytes(8).toString('hex')}`, scriptId: account.scriptId, type, name: type, enabled: true,
        settings: SETTINGS[type]('https://example.com'),
      });
    }
    return account;
  }

  it('a ~480 KB order with 900 products is answered within 1 MiB, marked, with every destination whole', async () => {
    const account = await accountWithFourDestinations();
    const products = Array.from({ length: 900 }, (_, i) => ({
      id: `SKU-${i}`, name: `Product ${i} ${'n'.repeat(400)}`, price_base: 10, price: 10, quantity: 1, category: 'Bulk', tax_included: true, tax_percent: 19,
    }));
    const body = checkout('ORD-BIG', { event: { name: 'checkout_completed', id: 'ORD-BIG', value: 9000, currency: 'EUR' }, products });
    const sent = Buffer.byteLength(JSON.stringify(body));
    expect(sent).to.be.within(400_000, 524_288);
    const r = await s.post(INTAKE_PATHS.test, body, { account });
    expect(r.status).to.equal(200);
    expect(Buffer.byteLength(r.text)).to.be.at.most(TEST_RESPONSE_MAX_BYTES);
    expect(r.body.errors).to.deep.equal([]);
    expect(r.body.warnings.some((w: string) => w.startsWith('RESPONSE_TRUNCATED'))).to.equal(true);
    expect(r.body.level).to.equal(1);
    expect(r.body.data_received).to.match(/^\[elided: the body as received, \d+ bytes/);
    expect(r.body.preview.map((p: any) => [p.type, p.status])).to.have.deep.members([
      ['ga4', 'would_send'], ['meta-capi', 'would_send'], ['tiktok', 'would_send'], ['webhook', 'would_send']]);
    for (const p of r.body.preview) {
      for (const req of p.requests) {
        expect(req.url).to.match(/^https:\/\/example\.com/);
        expect(req.headers).to.be.an('object');
        expect(req.raw_body).to.be.a('string');
      }
    }
  });

  it('a normal answer is untouched', async () => {
    const account = await accountWithFourDestinations();
    const r = await s.post(INTAKE_PATHS.test, checkout('ORD-SMALL'), { account });
    expect(r.body.warnings.join('\n')).not.to.contain('RESPONSE_TRUNCATED');
    expect(r.body.data_received).to.deep.equal(checkout('ORD-SMALL'));
    expect(r.body.preview[0].requests[0].body).to.be.an('object');
  });

  it('elides the least useful parts first and stops as soon as it fits', () => {
    const big = 'x'.repeat(50_000);
    const body = {
      level: 0, warnings: [], data_received: { big }, data_normalized: { big },
      preview: [{ requests: [{ body: { big }, raw_body: JSON.stringify({ big }) }] }],
    };
    const fits = boundTestResponse(body, 130_000);
    expect(fits.preview[0].requests[0].body).to.match(/^\[elided: parsed body/);
    expect(fits.data_received).to.match(/^\[elided: the body as received/);
    expect(fits.data_normalized, 'kept: it fits after two steps').to.deep.equal({ big });
    expect(fits.preview[0].requests[0].raw_body).to.equal(JSON.stringify({ big }));
    expect(body.data_received, 'the input is not changed').to.deep.equal({ big });
    const tight = boundTestResponse(body, 20_000);
    expect(tight.preview[0].requests[0].raw_body.length).to.be.below(9_000);
    expect(tight.data_normalized).to.match(/^\[elided: the normalised event/);
  });

  it('the text sent is the answer serialised once: the same bytes when it fits, the elided answer when not', () => {
    const small = { level: 0, warnings: [], data_received: { a: 'é' }, preview: [] };
    expect(boundTestResponseText(small)).to.equal(JSON.stringify(small));
    const big = 'x'.repeat(50_000);
    const body = { level: 0, warnings: [], data_received: { big }, data_normalized: { big }, preview: [] };
    expect(boundTestResponseText(body, 60_000)).to.equal(JSON.stringify(boundTestResponse(body, 60_000)));
    expect(JSON.parse(boundTestResponseText(body, 60_000)).data_received).to.match(/^\[elided: the body as received/);
  });

  it('a preview body is written as its own raw text: the same bytes for compact JSON, the same value otherwise', () => {
    const compact = JSON.stringify({ events: [{ name: 'purchase', value: 1.5 }], note: 'a "quoted" é \u0000' });
    const spaced = '{ "data": [ 1, 2 ],\n  "ok": true }';
    const request = (raw: string, parsed: unknown) => ({ method: 'POST', url: 'https://x', headers: {}, body: parsed, raw_body: raw });
    const answer = {
      level: 0, warnings: ['w'], data_received: { a: 1 },
      preview: [
        { type: 'ga4', requests: [request(compact, JSON.parse(compact)), request(spaced, JSON.parse(spaced))] },
        { type: 'form', requests: [request('a=1&b=2', 'a=1&b=2'), request('"text"', 'text'), request('null', null)] },
        { type: 'skipped', requests: [] },
      ],
    };
    const text = boundTestResponseText(answer);
    expect(JSON.parse(text)).to.deep.equal(answer);
    expect(text).to.include(`"body":${spaced},`);
    const onlyCompact = { ...answer, preview: [{ type: 'ga4', requests: [request(compact, JSON.parse(compact))] }] };
    expect(boundTestResponseText(onlyCompact)).to.equal(JSON.stringify(onlyCompact));
  });

  it('data_received is written as the body arrived, spacing and all, with the same value', () => {
    const received = ' {"event": {"name": "lead_created", "value": 1.50}, "note": "\\u00e9"}\n';
    const answer = { level: 0, warnings: [], data_received: JSON.parse(received), preview: [] };
    const text = boundTestResponseText(answer, TEST_RESPONSE_MAX_BYTES, received);
    expect(text).to.include('"data_received":{"event": {"name": "lead_created", "value": 1.50}');
    expect(JSON.parse(text)).to.deep.equal(answer);
    // Too large to answer whole: the parsed copy is elided as before.
    const big = JSON.stringify({ big: 'x'.repeat(50_000) });
    const bigAnswer = { level: 0, warnings: [], data_received: JSON.parse(big), preview: [] };
    expect(JSON.parse(boundTestResponseText(bigAnswer, 40_000, big)).data_received).to.match(/^\[elided: the body as received/);
  });

  it('endpoint 2 echoes the body it received, spacing kept', async () => {
    const account = await s.account();
    const body = `{"event": {"name": "checkout_completed", "id": "ECHO-1", "value": 10, "currency": "EUR"},\n "context": {"environment": "prod", "data_source": "website", "url": "https://shop.example/x"},\n "products": [{"id": "P", "name": "P", "category": "C", "price": 10, "quantity": 1}]}`;
    const r = await s.post(INTAKE_PATHS.test, null, { account, raw: body });
    expect(r.status).to.equal(200);
    expect(r.text).to.include(`"data_received":${body}`);
    expect(JSON.parse(r.text).data_received).to.deep.equal(JSON.parse(body));
  });
});

