// The account pays before its body is parsed: batch intake takes the request's token and
// the body's bytes before reading it, so a body refused as 400 still costs, an account over
// its limit is answered 429 without its body being parsed, and a second top-level "batch"
// is refused on the text. One tenant's flood costs only its own budget.
import { expect } from 'chai';
import { gzipSync } from 'node:zlib';
import { startTestApp, type TestApp, type TestAccount } from '../helpers/test-app.ts';
import { BATCH_PATH } from '../../src/http/batch-route.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';

const lead = (id: string) => ({
  event: { name: 'lead_created', id },
  context: { environment: 'prod', data_source: 'crm', url: 'https://shop.example/contact' },
  consent: { analytics: true, personalization: true, marketing: true },
});
/** A body refused with 400 INVALID_BODY once parsed: an unknown member beside a valid batch. */
const unknownMember = (id: string) => JSON.stringify({ batch: [lead(id)], extra: 1 });
const NOT_JSON = '{"batch":[';

const firstError = (r: { body: any }) => String(r.body?.errors?.[0] ?? '');

describe('intake charges the account before reading the body', function () {
  this.timeout(30_000);
  let s: TestApp;
  before(async () => {
    // 64 KiB of body per second per account: a burst of 128 KiB.
    s = await startTestApp({ INTAKE_BYTES_PER_SECOND: '65536', MAX_BATCH_BYTES: '4194304', AUTH_FAILURES_PER_MINUTE: '1000' });
  });
  after(() => s.close());

  /** A new account limited to `perSecond` events a second (a burst of twice that). */
  async function limited(perSecond: number): Promise<TestAccount> {
    const a = await s.account();
    await s.accounts.update(a.scriptId, { rateLimit: perSecond });
    return a;
  }
  const stored = async (a: TestAccount) => (await s.running.store.events.list({ scriptId: a.scriptId, limit: 1000 })).length;

  it('a body refused as an unknown member takes its token: 400s until the account is spent, then 429', async () => {
    const a = await limited(1);
    const statuses: number[] = [];
    for (let i = 0; i < 12 && !statuses.includes(429); i++) {
      statuses.push((await s.post(BATCH_PATH, null, { account: a, raw: unknownMember(`U-${i}`) })).status);
    }
    expect(statuses, statuses.join(',')).to.include(429);
    expect(statuses.filter((x) => x === 400).length).to.be.at.least(2);
    expect(await stored(a)).to.equal(0);
  });

  it('an account out of tokens is answered 429 before its body is parsed (a body that would be 400)', async () => {
    const a = await limited(1);
    let r = await s.post(BATCH_PATH, { batch: [lead('P-1'), lead('P-2')] }, { account: a });
    expect(r.status).to.equal(200);
    for (const raw of [NOT_JSON, '{"batch":[],"batch":[]}', unknownMember('P-3')]) {
      r = await s.post(BATCH_PATH, null, { account: a, raw });
      expect(r.status, raw).to.equal(429);
      expect(firstError(r)).to.match(/^RATE_LIMITED: More than 1 events per second/);
      expect(Number(r.headers.get('retry-after'))).to.be.at.least(1);
    }
    // Endpoints 1–3 share the account's bucket.
    expect((await s.post(INTAKE_PATHS.event, null, { account: a, raw: NOT_JSON })).status).to.equal(429);
  });

  it('charges the rest of a batch\'s events once counted; a batch larger than the burst still passes a full bucket', async () => {
    const a = await limited(2); // a burst of 4 events
    const r = await s.post(BATCH_PATH, { batch: Array.from({ length: 9 }, (_, i) => lead(`B-${i}`)) }, { account: a });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.accepted).to.equal(9);
    const next = await s.post(BATCH_PATH, { batch: [lead('B-9')] }, { account: a });
    expect(next.status).to.equal(429);
    expect(Number(next.headers.get('retry-after')), 'the debt of 5 events at 2/s').to.be.at.least(2);
  });

  it('body bytes: a large body puts the account in debt; its next request is 429 unread, other tenants are untouched', async () => {
    const flooder = await s.account();
    const quiet = await s.account();
    const pad = 'x'.repeat(10_000);
    // About 600 KB: more than the 128 KiB burst, so it passes a full budget and leaves it ~8 s in debt.
    const big = JSON.stringify({ batch: Array.from({ length: 60 }, (_, i) => ({ ...lead(`L-${i}`), event: { name: 'lead_created', id: `L-${i}`, properties: { pad } } })), extra: 1 });
    const first = await s.post(BATCH_PATH, null, { account: flooder, raw: big });
    expect(first.status, 'refused, but read and paid for').to.equal(400);
    for (const [path, raw] of [[BATCH_PATH, NOT_JSON], [BATCH_PATH, big], [INTAKE_PATHS.event, NOT_JSON], [INTAKE_PATHS.standard, JSON.stringify(lead('L-x'))]]) {
      const r = await s.post(path, null, { account: flooder, raw });
      expect(r.status, path).to.equal(429);
      expect(r.text).to.match(/RATE_LIMITED.{0,40}More than 65536 body bytes per second/);
      expect(Number(r.headers.get('retry-after'))).to.be.within(2, 10);
    }
    // The other tenant has its whole budget: a 100 KB batch and single events go through.
    const quietBatch = Array.from({ length: 9 }, (_, i) => ({ ...lead(`Q-${i}`), event: { name: 'lead_created', id: `Q-${i}`, properties: { pad } } }));
    expect((await s.post(BATCH_PATH, { batch: quietBatch }, { account: quiet })).status).to.equal(200);
    expect((await s.post(INTAKE_PATHS.event, lead('Q-10'), { account: quiet })).status).to.equal(200);
  });

  it('body bytes: a gzip body is charged for what it inflates to, and refused before parsing when the account cannot afford it', async () => {
    // ~600 KB of text in a few KB on the wire; it would be a 400 if parsed.
    const inflated = `{"batch":[${JSON.stringify(lead('G-1'))}],"pad":"${'y'.repeat(600_000)}"}`;
    const raw = gzipSync(inflated);
    expect(raw.length).to.be.below(10_000);
    const gzip = { 'content-encoding': 'gzip' };
    // A full budget: it passes (and is parsed: 400), charged its inflated size.
    const fresh = await s.account();
    expect((await s.post(BATCH_PATH, null, { account: fresh, raw, headers: gzip })).status).to.equal(400);
    const after = await s.post(BATCH_PATH, { batch: [lead('G-2')] }, { account: fresh });
    expect(after.status, 'in debt for the inflated bytes').to.equal(429);
    expect(Number(after.headers.get('retry-after'))).to.be.within(5, 10);
    // A budget already part spent: its few declared bytes pass, the inflated rest cannot be afforded: 429, not parsed.
    const spent = await s.account();
    expect((await s.post(BATCH_PATH, null, { account: spent, raw: unknownMember('G-3').replace('"extra":1', `"extra":"${'q'.repeat(100_000)}"`) })).status).to.equal(400);
    const r = await s.post(BATCH_PATH, null, { account: spent, raw, headers: gzip });
    expect(r.status, r.text).to.equal(429);
    expect(firstError(r)).to.match(/^RATE_LIMITED: More than 65536 body bytes per second/);
  });

  it('refuses a second top-level "batch" with 400 INVALID_BODY, however it is spelled, storing nothing', async () => {
    const a = await s.account();
    const many = `[${'{},'.repeat(29_999)}{}]`; // 30,000 objects
    const one = `[${JSON.stringify(lead('D-1'))}]`;
    const bodies = [
      `{"batch":${many},"batch":${one}}`,
      `{"batch":${one},"batch":${many}}`,
      ` { "batch" : ${many} ,\n\t"b\\u0061tch":${one} } `,
      `{"batch":[],"batch":${one}}`,
    ];
    for (const raw of bodies) {
      const r = await s.post(BATCH_PATH, null, { account: await s.account(), raw }); // each ~90 KB: a budget each
      expect(r.status, raw.slice(0, 40)).to.equal(400);
      expect(firstError(r)).to.match(/^INVALID_BODY: The member "batch" is given more than once/);
    }
    // A nested "batch" key is an event's business, not the envelope's.
    const nested = await s.post(BATCH_PATH, null, { account: a, raw: `{"batch":[{"batch":1,"batch":2,${JSON.stringify(lead('D-2')).slice(1)}]}` });
    expect(nested.status, nested.text).to.equal(200);
    expect(await stored(a)).to.equal(1);
  });

  it('a tenant flooding duplicate-key bodies spends only its own tokens', async () => {
    const flooder = await limited(1);
    const other = await limited(1); // a burst of 2 events
    const dup = `{"batch":[${'{},'.repeat(999)}{}],"batch":[${JSON.stringify(lead('F-1'))}]}`;
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await s.post(BATCH_PATH, null, { account: flooder, raw: dup })).status);
    expect(statuses.slice(0, 2), statuses.join(',')).to.deep.equal([400, 400]);
    expect(statuses, 'the flooder is spent').to.include(429);
    expect(await stored(flooder)).to.equal(0);
    const r = await s.post(BATCH_PATH, { batch: [lead('O-1'), lead('O-2')] }, { account: other });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.accepted).to.equal(2);
  });

  it('charges nothing before authentication: wrong tokens for a tenant\'s id do not spend its budget', async () => {
    const victim = await limited(1); // a burst of 2 events
    const big = JSON.stringify({ batch: [lead('A-1')], pad: 'z'.repeat(200_000) });
    for (let i = 0; i < 6; i++) {
      const r = await s.post(BATCH_PATH, null, { query: `id=${victim.scriptId}`, raw: big, headers: { 'x-service-access-token': 'tlk_not-the-token-000000000000000' } });
      expect(r.status).to.equal(401);
    }
    expect((await s.post(BATCH_PATH, { batch: [lead('A-2'), lead('A-3')] }, { account: victim })).status).to.equal(200);
  });
});
