// The validator's whole case table, run over real HTTP: every spec example accepted on
// endpoints 1–3; every invalid case refused on endpoint 3 with its code and field, and
// reported as a string on endpoint 2; every warning case accepted with its warning.
import { expect } from 'chai';
import { startTestApp, type TestApp, type TestAccount } from '../helpers/test-app.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { VALID_PAYLOADS, INVALID_CASES, WARNING_CASES, ACCEPTED_EDGE_CASES } from '../schema/fixtures.ts';

describe('validation over HTTP', () => {
  let s: TestApp;
  let a: TestAccount;
  before(async () => {
    s = await startTestApp();
    a = await s.account({ host: 'https://shop.example', taxRate: 19, country: 'RO' });
  });
  after(() => s.close());

  describe('spec examples are accepted on every endpoint', () => {
    for (const p of VALID_PAYLOADS) {
      it(p.name, async () => {
        const test = await s.post(INTAKE_PATHS.test, p.body, { account: a });
        expect(test.status).to.equal(200);
        expect(test.body.errors, JSON.stringify(test.body.errors)).to.deep.equal([]);
        expect(test.body.level).to.be.oneOf([0, 1]);
        const std = await s.post(INTAKE_PATHS.standard, p.body, { account: a });
        expect(std.status, JSON.stringify(std.body)).to.equal(200);
        const prod = await s.post(INTAKE_PATHS.event, p.body, { account: a });
        expect(prod.body).to.deep.equal({ emitter: 'tracklane', detail: 'Event received', level: 0, version: 1 });
      });
    }
  });

  describe(`${INVALID_CASES.length} invalid payloads are refused with the right code and field`, () => {
    for (const c of INVALID_CASES) {
      it(`${c.code} ${c.field}: ${c.name}`, async () => {
        const std = await s.post(INTAKE_PATHS.standard, c.body, { account: a });
        expect(std.status).to.equal(400);
        expect(std.body.status).to.equal('error');
        expect(std.body.errors.map((e: any) => `${e.code} ${e.field}`)).to.include(`${c.code} ${c.field}`);
        for (const e of std.body.errors) expect(e.message).to.be.a('string').and.not.equal('');
        const test = await s.post(INTAKE_PATHS.test, c.body, { account: a });
        expect(test.status).to.equal(200);
        expect(test.body.level).to.equal(2);
        expect(test.body.errors.some((e: string) => e.startsWith(`${c.code}: ${c.field ? c.field + ': ' : ''}`))).to.equal(true);
      });
    }
  });

  describe(`${WARNING_CASES.length} warning cases are accepted with their warning`, () => {
    for (const c of WARNING_CASES) {
      it(`${c.warningCode} ${c.warningField}: ${c.name}`, async () => {
        const test = await s.post(INTAKE_PATHS.test, c.body, { account: a });
        expect(test.body.errors, JSON.stringify(test.body.errors)).to.deep.equal([]);
        expect(test.body.level).to.equal(1);
        expect(test.body.warnings.some((w: string) => w.startsWith(`${c.warningCode}: ${c.warningField}`))).to.equal(true);
      });
    }
  });

  describe(`${ACCEPTED_EDGE_CASES.length} edge cases are accepted`, () => {
    for (const c of ACCEPTED_EDGE_CASES) {
      it(c.name, async () => {
        const std = await s.post(INTAKE_PATHS.standard, c.body, { account: a });
        expect(std.status, JSON.stringify(std.body)).to.equal(200);
      });
    }
  });

  it('endpoint 1 stores each invalid payload as rejected with the same errors endpoint 3 reports', async () => {
    for (const c of INVALID_CASES.slice(0, 25)) {
      const r = await s.post(INTAKE_PATHS.event, c.body, { account: a, headers: { 'x-request-id': `invalid-case-${INVALID_CASES.indexOf(c)}` } });
      expect(r.body.level).to.equal(0);
    }
    const rejected = await s.running.store.events.list({ scriptId: a.scriptId, status: 'rejected', limit: 1000 });
    for (const c of INVALID_CASES.slice(0, 25)) {
      const row = rejected.find((e) => e.requestId === `invalid-case-${INVALID_CASES.indexOf(c)}`);
      expect(row, c.name).to.not.equal(undefined);
      expect(row!.errors.map((e) => `${e.code} ${e.field}`)).to.include(`${c.code} ${c.field}`);
      expect(row!.payload).to.deep.equal(c.body);
    }
  });
});
