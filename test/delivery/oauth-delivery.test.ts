// Destinations configured with OAuth (client_id, client_secret, refresh_token), delivered
// through the dispatcher against two loopback doubles that answer as the platforms document:
// a token endpoint (form-encoded refresh_token grant → access_token + expires_in; a dead grant
// → 400 {"error":"invalid_grant"}) and a platform that answers 401 to an expired or revoked
// token. On both stores: the pause reason is the store's.
import { expect } from 'chai';
import { startDestinationDouble, type DestinationDouble, type RecordedRequest } from '../helpers/destination-double.ts';
import { STORE_KINDS, STORE_LABEL, storeHarness } from '../helpers/stores.ts';
import { checkout, createFixture, type Fixture } from './delivery-fixture.ts';
import type { DestinationRecord } from '../../src/store/types.ts';

const CLIENT_SECRET = 'GOCSPX-client-secret-9f2';
const REFRESH_TOKEN = '1//0refresh-token-Qm4';

/** Google's token endpoint: a new ya29 token per grant, living `lifetimeS`; or a refused grant. */
function googleTokenEndpoint(dbl: DestinationDouble, clock: () => number, lifetimeS = 3599) {
  const issued: { token: string; expiresAt: number }[] = [];
  let refuse = false;
  dbl.otherwise(() => {
    if (refuse) return { status: 400, body: { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' } };
    const token = `ya29.access-${issued.length + 1}`;
    issued.push({ token, expiresAt: clock() + lifetimeS * 1000 });
    return { status: 200, body: { access_token: token, expires_in: lifetimeS, scope: 'https://www.googleapis.com/auth/adwords', token_type: 'Bearer' } };
  });
  return {
    issued,
    refuseGrants(on: boolean) {
      refuse = on;
    },
  };
}

/** Google Ads: 200 for a live token, 401 UNAUTHENTICATED for an expired, revoked or unknown one. */
function googleAdsPlatform(dbl: DestinationDouble, clock: () => number, tokens: ReturnType<typeof googleTokenEndpoint>) {
  const revoked = new Set<string>();
  dbl.otherwise((req: RecordedRequest) => {
    const token = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
    const live = tokens.issued.find((t) => t.token === token && t.expiresAt > clock() && !revoked.has(token));
    if (!live) {
      return { status: 401, body: { error: { code: 401, message: 'Request had invalid authentication credentials. Expected OAuth 2 access token.', status: 'UNAUTHENTICATED' } } };
    }
    return { status: 200, body: { results: [{}] } };
  });
  return { revoke: (token: string) => revoked.add(token) };
}

const bearer = (r: RecordedRequest) => String(r.headers.authorization ?? '').replace(/^Bearer /, '');

for (const kind of STORE_KINDS) describe(`delivery (${STORE_LABEL[kind]}): OAuth destinations`, function () {
  const harness = storeHarness(kind);
  this.timeout(20_000);
  let f: Fixture;
  let tokenDbl: DestinationDouble;
  let ads: DestinationDouble;
  let scriptId: string;
  let tokens: ReturnType<typeof googleTokenEndpoint>;
  let platform: ReturnType<typeof googleAdsPlatform>;

  beforeEach(async () => {
    f = await createFixture({ open: () => harness.open() });
    tokenDbl = await startDestinationDouble();
    ads = await startDestinationDouble();
    scriptId = await f.account();
    tokens = googleTokenEndpoint(tokenDbl, f.clock);
    platform = googleAdsPlatform(ads, f.clock, tokens);
  });
  afterEach(async () => {
    await f.close();
    await tokenDbl.close();
    await ads.close();
  });

  const addGoogleAds = (): Promise<DestinationRecord> => f.store.destinations.add({
    id: `dst_oauth${kind}000000`, scriptId, type: 'google-ads', name: 'google ads', enabled: true,
    settings: {
      customer_id: '123-456-7890', developer_token: 'dev-token', conversion_actions: { checkout_completed: '111' },
      client_id: '123.apps.googleusercontent.com', client_secret: CLIENT_SECRET, refresh_token: REFRESH_TOKEN,
      token_url: `${tokenDbl.url}/token`, endpoint: ads.url,
    },
  });
  const statusOf = async (destinationId: string) => (await f.store.deliveries.list({ destinationId })).map((d) => d.status).sort();

  it('exchanges the refresh token as a form-encoded grant, and refreshes an expired token before sending', async () => {
    const dest = await addGoogleAds();
    const d = f.dispatcher();
    await f.ingest(scriptId, checkout('ORD-1'));
    await d.runOnce();
    expect(tokenDbl.requests).to.have.length(1);
    const grant = tokenDbl.requests[0];
    expect(grant.path).to.equal('/token');
    expect(grant.headers['content-type']).to.equal('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(grant.body))).to.deep.equal({
      grant_type: 'refresh_token', refresh_token: REFRESH_TOKEN, client_id: '123.apps.googleusercontent.com', client_secret: CLIENT_SECRET,
    });
    expect(ads.requests.map(bearer)).to.deep.equal(['ya29.access-1']);

    // A second conversion within the hour: the cached token, no new grant.
    f.clock.advance(10 * 60_000);
    await f.ingest(scriptId, checkout('ORD-2'));
    await d.runOnce();
    expect(tokenDbl.requests).to.have.length(1);

    // Past expires_in: a new token first, so the platform never sees the expired one.
    f.clock.advance(3_600_000);
    await f.ingest(scriptId, checkout('ORD-3'));
    await d.runOnce();
    expect(tokenDbl.requests).to.have.length(2);
    expect(ads.requests.map(bearer)).to.deep.equal(['ya29.access-1', 'ya29.access-1', 'ya29.access-2']);
    expect(await statusOf(dest.id)).to.deep.equal(['delivered', 'delivered', 'delivered']);
  });

  it('a 401 from the platform makes exactly one refresh, and the conversion is delivered on the same attempt', async () => {
    const dest = await addGoogleAds();
    const d = f.dispatcher();
    await f.ingest(scriptId, checkout('ORD-1'));
    await d.runOnce();
    f.clock.advance(5 * 60_000);
    platform.revoke('ya29.access-1');

    await f.ingest(scriptId, checkout('ORD-2'));
    await d.runOnce();
    expect(tokenDbl.requests, 'one refresh after the 401').to.have.length(2);
    expect(ads.requests.map((r) => bearer(r))).to.deep.equal(['ya29.access-1', 'ya29.access-1', 'ya29.access-2']);
    const [second] = await f.store.deliveries.list({ destinationId: dest.id, eventId: 'ORD-2' });
    expect(second).to.include({ status: 'delivered', attempts: 1, lastStatusCode: 200 });
    // What is kept of the attempt names no token and no secret.
    const attempts = await f.store.deliveries.attempts(second.id);
    expect(attempts[0].request?.headers.authorization).to.equal('****');
    expect(JSON.stringify(attempts)).to.not.include('ya29.access').and.not.include(CLIENT_SECRET).and.not.include(REFRESH_TOKEN);
  });

  it('invalid_grant pauses the destination with reason reauthorize; nothing is sent until its config is updated', async () => {
    const dest = await addGoogleAds();
    tokens.refuseGrants(true);
    const d = f.dispatcher();
    await f.ingest(scriptId, checkout('ORD-1'));
    await d.runOnce();
    expect(ads.requests, 'no conversion without a token').to.have.length(0);
    const health = await f.store.deliveries.health(dest.id);
    expect(health?.pausedAt).to.be.a('number');
    expect(health?.pauseReason).to.equal('reauthorize');
    const [held] = await f.store.deliveries.list({ destinationId: dest.id });
    expect(held).to.include({ status: 'pending', attempts: 1 });
    expect(held.lastError).to.match(/invalid_grant: Token has been expired or revoked/);
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
    expect(ads.requests).to.have.length(0);

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
