// The shared OAuth token cache against a loopback token endpoint through the real guarded
// sender: one exchange however many callers ask at once, an early refresh at a jittered
// point with the old token served meanwhile, failures remembered (a dead grant until the
// credentials change), one forced refresh per 401 burst, and the SSRF guard on token_url.
import { expect } from 'chai';
import { createHttpSender, type HttpSender } from '../../src/delivery/http-sender.ts';
import { sendAuthorized } from '../../src/delivery/oauth/authorized-send.ts';
import { createTokenCache, EARLY_JITTER_MS, EARLY_MS, FAILURE_HOLD_MS, type TokenCache } from '../../src/delivery/oauth/token-cache.ts';
import type { OAuthCredentials } from '../../src/destinations/oauth-settings.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { fakeClock, type FakeClock } from './delivery-fixture.ts';

describe('delivery: the OAuth token cache', function () {
  this.timeout(10_000);
  let dbl: DestinationDouble;
  let sender: HttpSender;
  let clock: FakeClock;
  let creds: OAuthCredentials;
  let issued: number;
  const cache = (random = () => 0.5, allowPrivate = true): TokenCache => {
    const s = allowPrivate ? sender : createHttpSender({ allowPrivate: false });
    return createTokenCache({ send: (req) => s.send(req), clock, random });
  };

  beforeEach(async () => {
    dbl = await startDestinationDouble();
    sender = createHttpSender({ allowPrivate: true });
    clock = fakeClock();
    issued = 0;
    // As LinkedIn answers a programmatic refresh (its refresh token comes back unchanged and is not used).
    dbl.otherwise(() => ({ status: 200, delayMs: 50, body: { access_token: `AQV-${++issued}`, expires_in: 3600, refresh_token: 'AQX', refresh_token_expires_in: 31536000 } }));
    creds = { tokenUrl: `${dbl.url}/oauth/v2/accessToken`, clientId: '86abc', clientSecret: 'li-secret', refreshToken: 'AQX' };
  });
  afterEach(async () => {
    await sender.close();
    await dbl.close();
  });

  it('concurrent callers share one exchange', async () => {
    const tokens = cache();
    const all = await Promise.all(Array.from({ length: 20 }, () => tokens.get('dst_a', creds)));
    expect(dbl.requests).to.have.length(1);
    expect(new Set(all.map((t) => (t.kind === 'token' ? t.accessToken : t.kind)))).to.deep.equal(new Set(['AQV-1']));
    // Another destination has its own token.
    await tokens.get('dst_b', creds);
    expect(dbl.requests).to.have.length(2);
  });

  it('refreshes early at a jittered point, serving the current token meanwhile; two processes refresh at different times', async () => {
    const early = cache(() => 0.9);
    const late = cache(() => 0.1);
    await early.get('dst_a', creds);
    await late.get('dst_a', creds);
    expect(dbl.requests).to.have.length(2);
    // Between the two refresh points only the one with the larger margin refreshes.
    clock.advance(3_600_000 - EARLY_MS - EARLY_JITTER_MS * 0.5);
    expect(await late.get('dst_a', creds)).to.deep.equal({ kind: 'token', accessToken: 'AQV-2' });
    const served = await early.get('dst_a', creds);
    expect(served, 'the old token while the new one is fetched').to.deep.equal({ kind: 'token', accessToken: 'AQV-1' });
    // Once the background exchange is in, the new token.
    let now: unknown;
    while ((now = await early.get('dst_a', creds)) && (now as { accessToken: string }).accessToken === 'AQV-1') await new Promise((r) => setTimeout(r, 10));
    expect(now).to.deep.equal({ kind: 'token', accessToken: 'AQV-3' });
    expect(dbl.requests).to.have.length(3);
  });

  it('remembers invalid_grant until the credentials change, and other failures for a few seconds', async () => {
    dbl.script({ status: 400, body: { error: 'invalid_grant', error_description: 'The provided authorization grant is invalid' } });
    const tokens = cache();
    const refused = await tokens.get('dst_a', creds);
    expect(refused.kind).to.equal('reauthorize');
    expect(refused.kind !== 'token' && refused.message).to.match(/HTTP 400 invalid_grant/).and.not.include('AQX').and.not.include('li-secret');
    clock.advance(24 * 3_600_000);
    expect((await tokens.get('dst_a', creds)).kind).to.equal('reauthorize');
    expect(dbl.requests).to.have.length(1);
    expect(await tokens.get('dst_a', { ...creds, refreshToken: 'AQX-new' })).to.deep.equal({ kind: 'token', accessToken: 'AQV-1' });

    dbl.script({ status: 503, body: 'busy' });
    const other = { ...creds, refreshToken: 'AQX-other' };
    expect((await tokens.get('dst_b', other)).kind).to.equal('failed');
    expect((await tokens.get('dst_b', other)).kind, 'held').to.equal('failed');
    expect(dbl.requests).to.have.length(3);
    clock.advance(FAILURE_HOLD_MS);
    expect(await tokens.get('dst_b', other)).to.deep.equal({ kind: 'token', accessToken: 'AQV-2' });
  });

  it('a burst of 401s on one token makes one refresh; a 401 on the fresh token moments later is judged as it is', async () => {
    const tokens = cache();
    let platformCalls = 0;
    const platform = async (req: { headers: Record<string, string> }) => {
      platformCalls++;
      const ok = req.headers.authorization === 'Bearer AQV-2';
      return { kind: 'response' as const, response: { status: ok ? 200 : 401, headers: {}, body: '' }, latencyMs: 1 };
    };
    await tokens.get('dst_a', creds);
    const request = { method: 'POST' as const, url: 'https://api.linkedin.com/rest/conversionEvents', headers: {}, body: '{}', eventIds: ['e'] };
    const sends = await Promise.all(Array.from({ length: 5 }, () => sendAuthorized(tokens, 'dst_a', creds, request, platform)));
    expect(sends.map((s) => s.result.kind === 'response' && s.result.response.status)).to.deep.equal([200, 200, 200, 200, 200]);
    expect(dbl.requests, 'the first grant and one refresh').to.have.length(2);
    expect(platformCalls).to.equal(10);

    // The platform now refuses the new token too: no second refresh within the gap.
    const refusing = async () => ({ kind: 'response' as const, response: { status: 401, headers: {}, body: '' }, latencyMs: 1 });
    const r = await sendAuthorized(tokens, 'dst_a', creds, request, refusing);
    expect(r.result.kind === 'response' && r.result.response.status).to.equal(401);
    expect(dbl.requests).to.have.length(2);
  });

  it('token requests pass the SSRF guard: a loopback token_url is refused without ALLOW_PRIVATE_DESTINATIONS', async () => {
    const tokens = cache(() => 0.5, false);
    const r = await tokens.get('dst_a', creds);
    expect(r.kind).to.equal('failed');
    expect(r.kind !== 'token' && r.message).to.match(/blocked/);
    expect(dbl.requests).to.have.length(0);
  });
});
