// Credentials, plan gate and rotation, over real HTTP.
import { expect } from 'chai';
import { startTestApp, waitFor, type TestApp, type TestAccount } from '../helpers/test-app.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';

const lead = { event: { name: 'lead_created', id: 'L-1' }, context: { environment: 'prod', data_source: 'crm' } };

describe('authentication and access', () => {
  let s: TestApp;
  let acct: TestAccount;
  before(async () => {
    s = await startTestApp();
    acct = await s.account();
  });
  after(() => s.close());

  it('accepts the right id and token on all three endpoints', async () => {
    for (const path of Object.values(INTAKE_PATHS)) {
      const r = await s.post(path, lead, { account: acct });
      expect(r.status, path).to.equal(200);
    }
  });

  const missing: [string, string, Record<string, string>][] = [
    ['no id', '', {}],
    ['id twice', 'id=AAAAAAAA&id=BBBBBBBB', {}],
    ['lower-case id', 'id=abcd1234', {}],
    ['7-char id', 'id=ABCD123', {}],
    ['9-char id', 'id=ABCD12345', {}],
  ];
  for (const [name, query, headers] of missing) {
    it(`401 AUTH_MISSING for ${name}`, async () => {
      const r = await s.post(INTAKE_PATHS.event, lead, { account: acct, query, headers });
      expect(r.status).to.equal(401);
      expect(r.body).to.deep.equal({
        emitter: 'tracklane', detail: 'Request refused: see errors', level: 2, version: 1,
        errors: ['AUTH_MISSING: The query parameter id must be given once, as the 8-character script id'],
      });
    });
  }

  it('401 AUTH_MISSING without a token header, also when the token is in the query string', async () => {
    const r = await s.post(INTAKE_PATHS.standard, lead, { query: `id=${acct.scriptId}&token=${acct.token}` });
    expect(r.status).to.equal(401);
    expect(r.body).to.deep.equal({
      status: 'error', message: 'The X-Service-Access-Token header is missing',
      errors: [{ field: '', code: 'AUTH_MISSING', message: 'The X-Service-Access-Token header is missing' }],
    });
  });

  it('answers an unknown id and a wrong token with identical bodies', async () => {
    const other = await s.account();
    const cases = [
      { query: 'id=ZZZZZZZZ', token: acct.token },
      { query: `id=${acct.scriptId}`, token: other.token },
      { query: `id=${acct.scriptId}`, token: acct.token + 'x' },
      { query: `id=${acct.scriptId}`, token: acct.token.slice(0, -1) },
      { query: `id=${acct.scriptId}`, token: 'x'.repeat(10_000) },
      { query: `id=${acct.scriptId}`, token: `${acct.token}, ${acct.token}` },
      { query: `id=${acct.scriptId}`, token: 'ä'.repeat(5) },
    ];
    const texts = new Set<string>();
    for (const c of cases) {
      const r = await s.post(INTAKE_PATHS.event, lead, { query: c.query, headers: { 'x-service-access-token': c.token } });
      expect(r.status).to.equal(401);
      expect(r.body.errors[0]).to.match(/^INVALID_CREDENTIALS: /);
      texts.add(r.text);
    }
    expect(texts.size).to.equal(1);
  });

  it('refuses tiers below FLEX, a missing add-on and a disabled account with 403 ACCESS_NOT_ENABLED', async () => {
    const basic = await s.account({ tier: 'BASIC' });
    const noAddon = await s.account({ addon: false });
    const disabled = await s.account({ tier: 'PRO' });
    await s.accounts.update(disabled.scriptId, { enabled: false });
    for (const a of [basic, noAddon, disabled]) {
      const r = await s.post(INTAKE_PATHS.standard, lead, { account: a });
      expect(r.status).to.equal(403);
      expect(r.body.errors[0].code).to.equal('ACCESS_NOT_ENABLED');
    }
    for (const tier of ['FLEX', 'PRO', 'CUSTOM']) {
      const a = await s.account({ tier });
      expect((await s.post(INTAKE_PATHS.event, lead, { account: a })).status, tier).to.equal(200);
    }
  });

  it('keeps the old token valid during the rotation grace period and refuses it after', async () => {
    const a = await s.account();
    const { accessToken } = await s.accounts.rotateToken(a.scriptId, 24);
    const next = { scriptId: a.scriptId, token: accessToken };
    expect((await s.post(INTAKE_PATHS.event, lead, { account: a })).status).to.equal(200);
    expect((await s.post(INTAKE_PATHS.event, lead, { account: next })).status).to.equal(200);
    // Rotating again with no grace ends every earlier token at once.
    const { accessToken: third } = await s.accounts.rotateToken(a.scriptId, 0);
    const ok = await waitFor(async () => (await s.post(INTAKE_PATHS.event, lead, { account: a })).status === 401, 2000);
    expect(ok, 'old token refused within 2 s').to.equal(true);
    expect((await s.post(INTAKE_PATHS.event, lead, { account: next })).status).to.equal(401);
    expect((await s.post(INTAKE_PATHS.event, lead, { account: { scriptId: a.scriptId, token: third } })).status).to.equal(200);
  });

  it('sees an account change made elsewhere within 2 s, without a restart', async () => {
    const a = await s.account();
    expect((await s.post(INTAKE_PATHS.event, lead, { account: a })).status).to.equal(200);
    await s.accounts.update(a.scriptId, { addon: false });
    const t0 = Date.now();
    const ok = await waitFor(async () => (await s.post(INTAKE_PATHS.event, lead, { account: a })).status === 403, 2000);
    expect(ok).to.equal(true);
    expect(Date.now() - t0).to.be.below(2000);
  });
});
