// Health, readiness, metrics and the OpenAPI document.
import { expect } from 'chai';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { BATCH_PATH } from '../../src/http/batch-route.ts';

describe('ops endpoints', () => {
  let s: TestApp;
  before(async () => {
    s = await startTestApp();
  });
  after(() => s.close());

  it('/healthz and /readyz answer 200', async () => {
    expect(await (await fetch(`${s.url}/healthz`)).json()).to.deep.equal({ status: 'ok' });
    const r = await fetch(`${s.url}/readyz`);
    expect(r.status).to.equal(200);
  });

  it('/metrics counts requests by route and status and validation failures by code', async () => {
    const a = await s.account();
    await s.post(INTAKE_PATHS.standard, { event: { name: 'checkout_completed' }, context: { environment: 'prod' } }, { account: a });
    await s.post(INTAKE_PATHS.event, {}, { query: 'id=ZZZZZZZZ', headers: { 'x-service-access-token': 'nope' } });
    const text = await (await fetch(`${s.url}/metrics`)).text();
    expect(text).to.match(/tracklane_http_requests_total\{route="standard",status="400"\} 1/);
    expect(text).to.match(/tracklane_http_requests_total\{route="event",status="401"\} 1/);
    expect(text).to.match(/tracklane_validation_failures_total\{code="REQUIRED_FIELD_MISSING"\} \d+/);
    expect(text).to.include('tracklane_http_request_duration_seconds_bucket');
  });

  it('/openapi.json is OpenAPI 3.1 of endpoints 1–3 and batch intake with the validator\'s payload schema', async () => {
    const doc = (await (await fetch(`${s.url}/openapi.json`)).json()) as any;
    expect(doc.openapi).to.equal('3.1.0');
    // The admin paths are described too (test/admin/admin-api.test.ts checks them against the router).
    expect(Object.keys(doc.paths).filter((p) => !p.startsWith('/admin/'))).to.have.members([...Object.values(INTAKE_PATHS), BATCH_PATH]);
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    const validate = ajv.compile(doc.components.schemas.EventPayload);
    const lead = { event: { name: 'lead_created', id: 'L-1' }, context: { environment: 'prod', data_source: 'crm' } };
    expect(validate(lead), JSON.stringify(validate.errors)).to.equal(true);
    expect(validate({ event: { name: 5 } })).to.equal(false);
  });
});
