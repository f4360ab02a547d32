// Destinations configured with OAuth (client_id, client_secret, refresh_token), Google Ads and
// LinkedIn, delivered through the dispatcher against two loopback doubles that answer as each
// platform documents: a token endpoint (form-encoded refresh_token grant → access_token +
// expires_in: an hour at Google, 60 days at LinkedIn; a dead grant → 400 {"error":"invalid_grant"})
// and a platform that answers 401 to an expired or revoked token. On both stores: the pause
// reason is the store's.
import { expect } from 'chai';
import { startDestinationDouble, type DestinationDouble, type RecordedRequest } from '../helpers/destination-double.ts';
import { STORE_KINDS, STORE_LABEL, storeHarness } from '../helpers/stores.ts';
import { checkout, createFixture, type Fixture } from './delivery-fixture.ts';
import type { DestinationRecord } from '../../src/store/types.ts';
import { packageVersion } from '../../src/package-version.ts';

const CLIENT_SECRET = 'GOCSPX-client-secret-9f2';
const REFRESH_TOKEN = '1//0refresh-token-Qm4';

/** How one OAuth platform answers: its token endpoint's tokens and their life, and the platform's 401 and 200. */
interface OAuthPlatform {
  type: string;
  clientId: string;
  /** Access tokens are `${tokenPrefix}1`, `${tokenPrefix}2`, … */
  tokenPrefix: string;
  lifetimeS: number;
  /** The token answer beyond access_token and expires_in. */
  grantExtra: Record<string, unknown>;
  invalidGrant: Record<string, unknown>;
  settings(tokenUrl: string, endpoint: string): Record<string, unknown>;
  unauthorized: Record<string, unknown>;
  ok(req: RecordedRequest): Record<string, unknown>;
}

const PLATFORMS: OAuthPlatform[] = [
  {
    type: 'google-ads',
    clientId: '123.apps.googleusercontent.com',
    tokenPrefix: 'ya29.access-',
    lifetimeS: 3599,
    grantExtra: { scope: 'https://www.googleapis.com/auth/adwords', token_type: 'Bearer' },
    invalidGrant: { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' },
    settings: (tokenUrl, endpoint) => ({ customer_id: '123-456-7890', developer_token: 'dev-token', conversion_actions: { checkout_completed: '111' }, token_url: tokenUrl, endpoint }),
    unauthorized: { error: { code: 401, message: 'Request had invalid authentication credentials. Expected OAuth 2 access token.', status: 'UNAUTHENTICATED' } },
    ok: () => ({ results: [{}] }),
  },
  {
    // Programmatic refresh tokens: access tokens live 60 days, the refresh token 365.
    type: 'linkedin',
    clientId: '86abcdefghijkl',
    tokenPrefix: 'AQV-access-',
    lifetimeS: 5_184_000,
    grantExtra: { refresh_token: REFRESH_TOKEN, refresh_token_expires_in: 31_536_000, scope: 'rw_conversions' },
    invalidGrant: { error: 'invalid_grant', error_description: 'The provided authorization grant or refresh token is invalid, expired or revoked.' },
    settings: (tokenUrl, endpoint) => ({ conversion_rules: { checkout_completed: '104012' }, token_url: tokenUrl, endpoint }),
    unauthorized: { status: 401, serviceErrorCode: 65601, code: 'EXPIRED_ACCESS_TOKEN', message: 'The token used in the request has expired' },
    ok: (req) => ({ elements: req.json<{ elements: unknown[] }>().elements.map(() => ({ status: 201 })) }),
  },
];

/** The token endpoint: a new token per grant, living `p.lifetimeS`; or a refused grant. */
function tokenEndpoint(p: OAuthPlatform, dbl: DestinationDouble, clock: () => number) {
  const issued: { token: string; expiresAt: number }[] = [];
  let refuse = false;
  dbl.otherwise(() => {
    if (refuse) return { status: 400, body: p.invalidGrant };
    const token = `${p.tokenPrefix}${issued.length + 1}`;
    issued.push({ token, expiresAt: clock() + p.lifetimeS * 1000 });
    return { status: 200, body: { access_token: token, expires_in: p.lifetimeS, ...p.grantExtra } };
  });
  return {
    issued,
    refuseGrants(on: boolean) {
      refuse = on;
    },
  };
}

/** The platform: its success for a live token, 401 for an expired, revoked or unknown one. */
function platformDouble(p: OAuthPlatform, dbl: DestinationDouble, clock: () => number, tokens: ReturnType<typeof tokenEndpoint>) {
  const revoked = new Set<string>();
  dbl.otherwise((req: RecordedRequest) => {
    const token = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
    const live = tokens.issued.find((t) => t.token === token && t.expiresAt > clock() && !revoked.has(token));
    return live ? { status: 200, body: p.ok(req) } : { status: 401, body: p.unauthorized };
  });
  return { revoke: (token: string) => revoked.add(token) };
}

const bearer = (r: RecordedRequest) => String(r.headers.authorization ?? '').replace(/^Bearer /, '');

for (const kind of STORE_KINDS) for (const p of PLATFORMS) describe(`delivery (${STORE_LABEL[kind]}): OAuth destinations, ${p.type}`, function () {
  const harness = storeHarness(kind);
  this.timeout(20_000);
  let f: Fixture;
  let tokenDbl: DestinationDouble;
  let api: DestinationDouble;
  let scriptId: string;
  let tokens: ReturnType<typeof tokenEndpoint>;
  let platform: ReturnType<typeof platformDouble>;
  const token = (n: number) => `${p.tokenPrefix}${n}`;

  beforeEach(async () => {
    f = await createFixture({ open: () => harness.open() });
    tokenDbl = await startDestinationDouble();
    api = await startDestinationDouble();
    scriptId = await f.account();
    tokens = tokenEndpoint(p, tokenDbl, f.clock);
    platform = platformDouble(p, api, f.clock, tokens);
  });
  afterEach(async () => {
    await f.close();
    await tokenDbl.close();
    await api.close();
  });

  const addDestination = (): Promise<DestinationRecord> => f.store.destinations.add({
    id: `dst_oauth${kind}${p.type.replace(/\W/g, '')}`, scriptId, type: p.type, name: p.type, enabled: true,
    settings: { ...p.settings(`${tokenDbl.url}/token`, api.url), client_id: p.clientId, client_secret: CLIENT_SECRET, refresh_token: REFRESH_TOKEN },
  });
  const statusOf = async (destinationId: string) => (await f.store.deliveries.list({ destinationId })).map((d) => d.status).sort();

  it('exchanges the refresh token as a form-encoded grant, and refreshes an expired token before sending', async () => {
    const dest = await addDestination();
    const d = f.dispatcher();
    await f.ingest(scriptId, checkout('ORD-1'));
    await d.runOnce();
    expect(tokenDbl.requests).to.have.length(1);
    const grant = tokenDbl.requests[0];
    expect(grant.path).to.equal('/token');
    expect(grant.headers['content-type']).to.equal('application/x-www-form-urlencoded');
    expect(grant.headers['user-agent'], 'token requests name their sender too').to.equal(`tracklane/${packageVersion()}`);
    expect(Object.fromEntries(new URLSearchParams(grant.body))).to.deep.equal({
      grant_type: 'refresh_token', refresh_token: REFRESH_TOKEN, client_id: p.clientId, client_secret: CLIENT_SECRET,
    });
    expect(api.requests.map(bearer)).to.deep.equal([token(1)]);

    // A second conversion well within the token's life: the cached token, no new grant.
    f.clock.advance(10 * 60_000);
    await f.ingest(scriptId, checkout('ORD-2'));
    await d.runOnce();
    expect(tokenDbl.requests).to.have.length(1);

    // Past expires_in: a new token first, so the platform never sees the expired one.
    f.clock.advance(p.lifetimeS * 1000);
    await f.ingest(scriptId, checkout('ORD-3'));
    await d.runOnce();
    expect(tokenDbl.requests).to.have.length(2);
    expect(api.requests.map(bearer)).to.deep.equal([token(1), token(1), token(2)]);
    expect(await statusOf(dest.id)).to.deep.equal(['delivered', 'delivered', 'delivered']);
  });

  it('a 401 from the platform makes exactly one refresh, and the conversion is delivered on the same attempt', async () => {
    const dest = await addDestination();
    const d = f.dispatcher();
    await f.ingest(scriptId, checkout('ORD-1'));
    await d.runOnce();
    f.clock.advance(5 * 60_000);
    platform.revoke(token(1));

    await f.ingest(scriptId, checkout('ORD-2'));
    await d.runOnce();
    expect(tokenDbl.requests, 'one refresh after the 401').to.have.length(2);
    expect(api.requests.map((r) => bearer(r))).to.deep.equal([token(1), token(1), token(2)]);
    const [second] = await f.store.deliveries.list({ destinationId: dest.id, eventId: 'ORD-2' });
    expect(second).to.include({ status: 'delivered', attempts: 1, lastStatusCode: 200 });
    // What is kept of the attempt names no token and no secret.
    const attempts = await f.store.deliveries.attempts(second.id);
    expect(attempts[0].request?.headers.authorization).to.equal('****');
    expect(JSON.stringify(attempts)).to.not.include(p.tokenPrefix).and.not.include(CLIENT_SECRET).and.not.include(REFRESH_TOKEN);
  });

  it('invalid_grant pauses the destination with reason reauthorize; nothing is sent until its config is updated', async () => {
    const dest = await addDestination();
    tokens.refuseGrants(true);
    const d = f.dispatcher();
    await f.ingest(scriptId, checkout('ORD-1'));
    await d.runOnce();
    expect(api.requests, 'no conversion without a token').to.have.length(0);
    const health = await f.store.deliveries.health(dest.id);
    expect(health?.pausedAt).to.be.a('number');
    expect(health?.pauseReason).to.equal('reauthorize');
    const [held] = await f.store.deliveries.list({ destinationId: dest.id });
    expect(held).to.include({ status: 'pending', attempts: 1 });
    expect(held.lastError).to.contain(`invalid_grant: ${String(p.invalidGrant.error_description)}`);
    const [attempt] = await f.store.deliveries.attempts(held.id);
    expect(attempt).to.include({ statusCode: null, errorClass: 'oauth', outcome: 'retryable' });
    const stats = (await f.store.deliveries.stats(scriptId)).find((s) => s.destinationId === dest.id);
    expect(stats?.health?.pauseReason).to.equal('reauthorize');

    // More events, time passing, even the grant working again: paused, nothing sent.
    await f.ingest(scriptId, checkout('ORD-2'));
    f.clock.advance(3_600_000);
    tokens.refuseGrants(false);
    await d.runOnce();
    expect(tokenDbl.requests).to.have.length(1);
    expect(api.requests).to.have.length(0);

    // The operator authorizes the app again and gives the new refresh token: resumed, delivered.
    f.clock.advance(1_000);
    await f.store.destinations.update(scriptId, dest.id, { settings: { ...dest.settings, refresh_token: '1//0new-refresh-token' } });
    await d.runOnce();
    await d.runOnce();
    expect(new URLSearchParams(tokenDbl.requests.at(-1)!.body).get('refresh_token')).to.equal('1//0new-refresh-token');
    expect(await statusOf(dest.id)).to.deep.equal(['delivered', 'delivered']);
    expect((await f.store.deliveries.health(dest.id))?.pausedAt).to.equal(null);
  });
});
