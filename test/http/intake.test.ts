// Endpoints 1–3 end to end: what each answers, what each stores, storage failure.
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { startTestApp, waitFor, type TestApp, type TestAccount } from '../helpers/test-app.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { sqliteFile } from '../../src/store/open-store.ts';

const lead = { event: { name: 'lead_created', id: 'L-1' }, context: { environment: 'prod', data_source: 'crm' } };
const invalid = { event: { name: 'checkout_completed', value: 10, currency: 'EUR' }, context: { environment: 'prod', data_source: 'website' } };

describe('intake endpoints', () => {
  let s: TestApp;
  let a: TestAccount;
  before(async () => {
    s = await startTestApp({}, { busyTimeoutMs: 100 });
    a = await s.account({ host: 'https://shop.example' });
  });
  after(() => s.close());

  const events = () => s.running.store.events.list({ scriptId: a.scriptId, limit: 1000 });

  it('endpoint 1 acknowledges after the commit and stores the normalised event', async () => {
    const r = await s.post(INTAKE_PATHS.event, { ...lead, event: { ...lead.event, id: 'E1-OK' } }, { account: a });
    expect(r.status).to.equal(200);
    expect(r.body).to.deep.equal({ emitter: 'tracklane', detail: 'Event received', level: 0, version: 1 });
    const [row] = (await events()).filter((e) => e.eventId === 'E1-OK');
    expect(row).to.include({ status: 'accepted', name: 'lead_created', source: 'event' });
    expect((row.payload as any).consent).to.deep.equal({ analytics: true, personalization: true, marketing: true });
    expect(row.requestId).to.equal(r.headers.get('x-request-id'));
  });

  it('endpoint 1 acknowledges an invalid event with level 0 and keeps it as rejected with its errors', async () => {
    const r = await s.post(INTAKE_PATHS.event, invalid, { account: a });
    expect(r.status).to.equal(200);
    expect(r.body.level).to.equal(0);
    const rejected = (await events()).filter((e) => e.status === 'rejected');
    expect(rejected).to.have.length(1);
    expect(rejected[0].errors.map((e) => `${e.code} ${e.field}`)).to.include('REQUIRED_FIELD_MISSING event.id');
    expect(rejected[0].payload).to.deep.equal(invalid);
  });

  it('endpoint 2 answers with feedback and stores nothing', async () => {
    const before = (await events()).length;
    const ok = await s.post(INTAKE_PATHS.test, lead, { account: a });
    expect(ok.status).to.equal(200);
    expect(ok.body).to.include({ emitter: 'tracklane', detail: 'Event received and processed', version: 1 });
    expect(ok.body.errors).to.deep.equal([]);
    expect(ok.body.data_received).to.deep.equal(lead);
    expect(ok.body.level).to.equal(ok.body.warnings.length > 0 ? 1 : 0);

    const warned = await s.post(INTAKE_PATHS.test, { event: { name: 'order_canceled', id: 'O-1' }, context: { environment: 'prod' } }, { account: a });
    expect(warned.body.level).to.equal(1);
    expect(warned.body.warnings.some((w: string) => w.includes('context.data_source'))).to.equal(true);

    const bad = await s.post(INTAKE_PATHS.test, invalid, { account: a });
    expect(bad.status).to.equal(200);
    expect(bad.body).to.include({ detail: 'Event processing failed: see errors', level: 2 });
    expect(bad.body.errors.some((e: string) => e.startsWith('REQUIRED_FIELD_MISSING: event.id'))).to.equal(true);
    expect(bad.body.data_normalized).to.equal(null);
    expect((await events()).length).to.equal(before);
  });

  it('endpoint 3 answers 400 with coded errors and stores nothing, or stores and answers success', async () => {
    const before = (await events()).length;
    const bad = await s.post(INTAKE_PATHS.standard, invalid, { account: a });
    expect(bad.status).to.equal(400);
    expect(bad.body.status).to.equal('error');
    expect(bad.body.errors).to.deep.include({ field: 'event.id', code: 'REQUIRED_FIELD_MISSING', message: bad.body.errors.find((e: any) => e.field === 'event.id').message });
    expect((await events()).length).to.equal(before);

    const ok = await s.post(INTAKE_PATHS.standard, { ...lead, event: { ...lead.event, id: 'E3-OK' } }, { account: a });
    expect(ok.status).to.equal(200);
    expect(ok.body).to.include({ status: 'success', message: 'Event accepted' });
    expect((await events()).filter((e) => e.eventId === 'E3-OK')).to.have.length(1);
  });

  it('refuses an event name the account has not approved, until the operator approves it', async () => {
    const custom = { event: { name: 'subscription_renewed', id: 'S-1' }, context: { environment: 'prod', data_source: 'app' } };
    const r = await s.post(INTAKE_PATHS.standard, custom, { account: a });
    expect(r.status).to.equal(400);
    expect(r.body.errors[0]).to.include({ field: 'event.name', code: 'EVENT_NOT_APPROVED' });
    await s.accounts.update(a.scriptId, { approveEvents: ['subscription_renewed'] });
    expect(await waitFor(async () => (await s.post(INTAKE_PATHS.standard, custom, { account: a })).status === 200, 2000)).to.equal(true);
  });

  it('answers 503 UNAVAILABLE with Retry-After, never 2xx, when the store cannot commit', async () => {
    const blocker = new Database(sqliteFile(s.config));
    blocker.exec('BEGIN EXCLUSIVE');
    try {
      const r1 = await s.post(INTAKE_PATHS.event, { ...lead, event: { ...lead.event, id: 'LOCKED-1' } }, { account: a });
      expect(r1.status).to.equal(503);
      expect(r1.headers.get('retry-after')).to.equal('5');
      expect(r1.body).to.deep.equal({
        emitter: 'tracklane', detail: 'Request refused: see errors', level: 2, version: 1,
        errors: ['UNAVAILABLE: The service cannot store events right now; retry later'],
      });
      const r3 = await s.post(INTAKE_PATHS.standard, { ...lead, event: { ...lead.event, id: 'LOCKED-3' } }, { account: a });
      expect(r3.status).to.equal(503);
      expect(r3.body.errors[0].code).to.equal('UNAVAILABLE');
    } finally {
      blocker.exec('ROLLBACK');
      blocker.close();
    }
    const ids = (await events()).map((e) => e.eventId);
    expect(ids).to.not.include('LOCKED-1');
    expect(ids).to.not.include('LOCKED-3');
    const again = await s.post(INTAKE_PATHS.event, { ...lead, event: { ...lead.event, id: 'LOCKED-1' } }, { account: a });
    expect(again.status).to.equal(200);
  });

  it('puts an X-Request-Id on every response and keeps a sane incoming one', async () => {
    const r = await s.post(INTAKE_PATHS.event, lead, { account: a, headers: { 'x-request-id': 'client-req-123456' } });
    expect(r.headers.get('x-request-id')).to.equal('client-req-123456');
    const bad = await s.post(INTAKE_PATHS.event, lead, { account: a, headers: { 'x-request-id': 'bad id with spaces' } });
    expect(bad.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
    const res = await fetch(`${s.url}/nowhere`);
    expect(res.status).to.equal(404);
    expect(res.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
  });
});
