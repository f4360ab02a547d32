// Each extra authentication mechanism of endpoint.json over real HTTP, accepting and
// refusing: API key (inline hashes with rotation, or a variable), JWT HS256 and RS256 (iss,
// aud, exp, nbf, algorithm pinning), HMAC with replay window, IPv4/IPv6 allow-lists.
import { expect } from 'chai';
import { createHash, createHmac } from 'node:crypto';
import { rmSync } from 'node:fs';
import { SignJWT, exportSPKI, generateKeyPair, type CryptoKey } from 'jose';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/test-app.ts';
import { ipAllowed, parseCidr } from '../../src/customers/auth/ip-allow-list.ts';
import { customersRoot, writeEndpoint } from './fixtures.ts';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const KEY_1 = 'partner-key-one-7f3a9c';
const KEY_2 = 'partner-key-two-0b12de';
const ENV_KEY = 'partner-key-from-env-55aa';
const HS_SECRET = 'hs256-test-secret-at-least-32-bytes-long!';
const HMAC_SECRET = 'hmac-test-secret-at-least-32-bytes-long!!';
const ISS = 'https://crm.example.test';
const AUD = 'tracklane:test';

describe('custom endpoints: extra authentication', () => {
  let root: string;
  let s: TestApp;
  let a: TestAccount;
  let rsPrivate: CryptoKey;
  let otherPrivate: CryptoKey;
  let rsPublicPem: string;

  before(async () => {
    const pair = await generateKeyPair('RS256');
    rsPrivate = pair.privateKey;
    rsPublicPem = await exportSPKI(pair.publicKey);
    otherPrivate = (await generateKeyPair('RS256')).privateKey;
    process.env.TL_TEST_API_KEY = ENV_KEY;
    process.env.TL_TEST_RS256_PUBLIC = rsPublicPem;
    process.env.TL_TEST_HMAC_SECRET = HMAC_SECRET;

    root = customersRoot();
    const ep = (name: string, auth: unknown[]) => writeEndpoint(root, 'sec', name, { config: { description: name, auth } });
    ep('api-key', [{ type: 'api_key', header: 'X-Partner-Key', key_sha256: [sha256(KEY_1), sha256(KEY_2)] }]);
    ep('api-key-env', [{ type: 'api_key', key_env: 'TL_TEST_API_KEY' }]);
    ep('jwt-hs', [{ type: 'jwt', algorithm: 'HS256', issuer: ISS, audience: AUD, secret: HS_SECRET, clock_tolerance_seconds: 0 }]);
    ep('jwt-rs', [{ type: 'jwt', algorithm: 'RS256', issuer: ISS, audience: AUD, public_key_env: 'TL_TEST_RS256_PUBLIC' }]);
    ep('jwt-header', [{ type: 'jwt', algorithm: 'HS256', issuer: ISS, audience: AUD, secret: HS_SECRET, header: 'X-Token' }]);
    ep('hmac', [{ type: 'hmac', secret_env: 'TL_TEST_HMAC_SECRET', tolerance_seconds: 300 }]);
    ep('ip4', [{ type: 'ip_allow', cidrs: ['203.0.113.0/24', '127.0.0.1'] }]);
    ep('ip6', [{ type: 'ip_allow', cidrs: ['2001:db8:abcd::/48'] }]);
    ep('combo', [
      { type: 'hmac', secret: HMAC_SECRET },
      { type: 'api_key', key_sha256: [sha256(KEY_1)] },
      { type: 'ip_allow', cidrs: ['127.0.0.0/8', '::1'] },
    ]);
    ep('office', [{ type: 'ip_allow', cidrs: ['10.1.2.0/24'] }]);
    // This server sits behind a proxy on loopback: X-Forwarded-For is read from the right.
    s = await startTestApp({ CUSTOMERS_DIR: root, TRUST_PROXY: '127.0.0.1' });
    a = await s.account({ tier: 'CUSTOM' });
    await s.accounts.update(a.scriptId, { customer: 'sec' });
  });
  after(async () => {
    await s.close();
    rmSync(root, { recursive: true, force: true });
    delete process.env.TL_TEST_API_KEY;
    delete process.env.TL_TEST_RS256_PUBLIC;
    delete process.env.TL_TEST_HMAC_SECRET;
  });

  const body = { n: 3 };
  const post = (name: string, headers: Record<string, string>, raw?: string) =>
    s.post(`/service/custom/${name}`, body, { account: a, query: `id=${a.scriptId}&env=test`, headers, raw });
  const expectOk = async (name: string, headers: Record<string, string>, raw?: string) => {
    const r = await post(name, headers, raw);
    expect(r.status, r.text).to.equal(200);
    expect(r.body.result).to.equal('ok');
  };
  const expectRefused = async (name: string, headers: Record<string, string>, status: number, code: string, message: string | RegExp, raw?: string) => {
    const r = await post(name, headers, raw);
    expect(r.status, r.text).to.equal(status);
    expect(r.body.result).to.equal('error');
    expect(r.body.error_code).to.equal(code);
    if (typeof message === 'string') expect(r.body.messages).to.deep.equal([message]);
    else expect(r.body.messages[0]).to.match(message);
  };

  describe('api_key', () => {
    it('accepts each listed key (rotation) and a key from the named variable', async () => {
      await expectOk('api-key', { 'x-partner-key': KEY_1 });
      await expectOk('api-key', { 'x-partner-key': KEY_2 });
      await expectOk('api-key-env', { 'x-api-key': ENV_KEY });
    });
    it('refuses a missing, wrong, prefix-only or oversized key', async () => {
      await expectRefused('api-key', {}, 401, 'AUTH_MISSING', 'The X-Partner-Key header is missing');
      const wrong = 'The X-Partner-Key header does not hold a valid key for this endpoint';
      await expectRefused('api-key', { 'x-partner-key': 'partner-key-one' }, 401, 'INVALID_CREDENTIALS', wrong);
      await expectRefused('api-key', { 'x-partner-key': sha256(KEY_1) }, 401, 'INVALID_CREDENTIALS', wrong);
      await expectRefused('api-key', { 'x-partner-key': 'k'.repeat(600) }, 401, 'INVALID_CREDENTIALS', wrong);
      await expectRefused('api-key-env', { 'x-api-key': KEY_1 }, 401, 'INVALID_CREDENTIALS', /does not hold a valid key/);
    });
    it('names the header in error_context.field', async () => {
      const r = await post('api-key', {});
      expect(r.body.error_context).to.deep.equal({ field: 'X-Partner-Key', expected_format: '' });
    });
  });

  describe('jwt', () => {
    const now = () => Math.floor(Date.now() / 1000);
    const hs = (claims: Record<string, unknown> = {}, opts: { alg?: string; secret?: string; iss?: string; aud?: string; exp?: number | null; nbf?: number } = {}) => {
      const jwt = new SignJWT({ sub: 'crm', ...claims }).setProtectedHeader({ alg: opts.alg ?? 'HS256' }).setIssuedAt()
        .setIssuer(opts.iss ?? ISS).setAudience(opts.aud ?? AUD);
      if (opts.exp !== null) jwt.setExpirationTime(opts.exp ?? now() + 300);
      if (opts.nbf !== undefined) jwt.setNotBefore(opts.nbf);
      return jwt.sign(new TextEncoder().encode(opts.secret ?? HS_SECRET));
    };
    const rs = (key: CryptoKey, opts: { exp?: number } = {}) =>
      new SignJWT({}).setProtectedHeader({ alg: 'RS256' }).setIssuedAt().setIssuer(ISS).setAudience(AUD).setExpirationTime(opts.exp ?? now() + 300).sign(key);
    const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

    it('HS256: accepts a valid token, in Authorization or a configured header', async () => {
      await expectOk('jwt-hs', bearer(await hs()));
      await expectOk('jwt-hs', { authorization: `bearer   ${await hs()}` });
      await expectOk('jwt-header', { 'x-token': await hs() });
    });
    it('HS256: refuses missing, not-Bearer, wrong secret, iss, aud, expired, not yet valid, without exp, other algorithms', async () => {
      await expectRefused('jwt-hs', {}, 401, 'AUTH_MISSING', 'The Authorization header with a JWT is missing');
      await expectRefused('jwt-hs', { authorization: `Basic ${await hs()}` }, 401, 'INVALID_CREDENTIALS', 'The Authorization header must be "Bearer <JWT>"');
      await expectRefused('jwt-hs', bearer(await hs({}, { secret: 'another-secret-that-is-32-bytes-long!!' })), 401, 'INVALID_CREDENTIALS', 'JWT refused: the token signature is not valid');
      await expectRefused('jwt-hs', bearer(await hs({}, { iss: 'https://evil.example' })), 401, 'INVALID_CREDENTIALS', 'JWT refused: the token\'s "iss" claim is not the one this endpoint expects');
      await expectRefused('jwt-hs', bearer(await hs({}, { aud: 'someone-else' })), 401, 'INVALID_CREDENTIALS', 'JWT refused: the token\'s "aud" claim is not the one this endpoint expects');
      await expectRefused('jwt-hs', bearer(await hs({}, { exp: now() - 10 })), 401, 'INVALID_CREDENTIALS', 'JWT refused: the token has expired');
      await expectRefused('jwt-hs', bearer(await hs({}, { nbf: now() + 120 })), 401, 'INVALID_CREDENTIALS', 'JWT refused: the token is not valid yet (nbf)');
      await expectRefused('jwt-hs', bearer(await hs({}, { exp: null })), 401, 'INVALID_CREDENTIALS', 'JWT refused: the token has no "exp" claim');
      await expectRefused('jwt-hs', bearer(await hs({}, { alg: 'HS512', secret: HS_SECRET + HS_SECRET })), 401, 'INVALID_CREDENTIALS', 'JWT refused: the token is signed with an algorithm this endpoint does not accept');
      await expectRefused('jwt-hs', bearer(await rs(rsPrivate)), 401, 'INVALID_CREDENTIALS', 'JWT refused: the token is signed with an algorithm this endpoint does not accept');
      await expectRefused('jwt-hs', bearer('not.a.jwt'), 401, 'INVALID_CREDENTIALS', 'JWT refused: the token is malformed');
      const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ iss: ISS, aud: AUD, exp: now() + 60 })).toString('base64url')}.`;
      await expectRefused('jwt-hs', bearer(unsigned), 401, 'INVALID_CREDENTIALS', /^JWT refused: /);
    });
    it('RS256: accepts a token of the configured key; refuses another key, an expired token, and HS256 keyed with the public key', async () => {
      await expectOk('jwt-rs', bearer(await rs(rsPrivate)));
      await expectRefused('jwt-rs', bearer(await rs(otherPrivate)), 401, 'INVALID_CREDENTIALS', 'JWT refused: the token signature is not valid');
      await expectRefused('jwt-rs', bearer(await rs(rsPrivate, { exp: now() - 60 })), 401, 'INVALID_CREDENTIALS', 'JWT refused: the token has expired');
      await expectRefused('jwt-rs', bearer(await hs({}, { secret: rsPublicPem })), 401, 'INVALID_CREDENTIALS', 'JWT refused: the token is signed with an algorithm this endpoint does not accept');
    });
  });

  describe('hmac', () => {
    const raw = JSON.stringify(body);
    const sign = (ts: number, payload = raw, secret = HMAC_SECRET) => createHmac('sha256', secret).update(`${ts}.${payload}`).digest('hex');
    const nowS = () => Math.floor(Date.now() / 1000);
    const headers = (sig: string, ts: number | string) => ({ 'x-signature': sig, 'x-signature-timestamp': String(ts) });

    it('accepts a signature of `<timestamp>.<raw body>`, bare hex or sha256= prefixed, within the window', async () => {
      const ts = nowS();
      await expectOk('hmac', headers(sign(ts), ts), raw);
      await expectOk('hmac', headers(`sha256=${sign(ts).toUpperCase()}`, ts), raw);
      await expectOk('hmac', headers(sign(ts - 290), ts - 290), raw);
    });
    it('refuses missing headers, a stale or future timestamp, a tampered body, a wrong secret, a malformed signature', async () => {
      const ts = nowS();
      await expectRefused('hmac', { 'x-signature-timestamp': String(ts) }, 401, 'AUTH_MISSING', 'The X-Signature header is missing', raw);
      await expectRefused('hmac', { 'x-signature': sign(ts) }, 401, 'AUTH_MISSING', 'The X-Signature-Timestamp header is missing', raw);
      const window = 'The X-Signature-Timestamp is more than 300 seconds away from the server\'s clock; sign the request again';
      await expectRefused('hmac', headers(sign(ts - 400), ts - 400), 401, 'INVALID_CREDENTIALS', window, raw);
      await expectRefused('hmac', headers(sign(ts + 400), ts + 400), 401, 'INVALID_CREDENTIALS', window, raw);
      await expectRefused('hmac', headers(sign(ts), 'yesterday'), 401, 'INVALID_CREDENTIALS', 'The X-Signature-Timestamp header must be a Unix time in seconds', raw);
      const mismatch = 'The X-Signature does not match the body and timestamp';
      await expectRefused('hmac', headers(sign(ts), ts), 401, 'INVALID_CREDENTIALS', mismatch, JSON.stringify({ n: 4 }));
      await expectRefused('hmac', headers(sign(ts), ts), 401, 'INVALID_CREDENTIALS', mismatch, `${raw} `);
      await expectRefused('hmac', headers(sign(ts, raw, 'another-secret-that-is-32-bytes-long!!'), ts), 401, 'INVALID_CREDENTIALS', mismatch, raw);
      await expectRefused('hmac', headers(sign(ts - 1), ts), 401, 'INVALID_CREDENTIALS', mismatch, raw);
      await expectRefused('hmac', headers('abc123', ts), 401, 'INVALID_CREDENTIALS', 'The X-Signature header must be a hex HMAC-SHA256 digest', raw);
    });
  });

  describe('ip_allow', () => {
    const from = (ip: string) => ({ 'x-forwarded-for': ip });
    const refused = 'Requests to this endpoint are not allowed from this address';
    it('IPv4: accepts the socket address and forwarded addresses inside the CIDRs (IPv4-mapped IPv6 too)', async () => {
      await expectOk('ip4', {});
      await expectOk('ip4', from('203.0.113.9'));
      await expectOk('ip4', from('10.0.0.1, 203.0.113.255'));
      await expectOk('ip4', from('::ffff:203.0.113.77'));
    });
    it('IPv4: refuses addresses outside, and anything that is not an address', async () => {
      await expectRefused('ip4', from('198.51.100.1'), 403, 'ACCESS_NOT_ENABLED', refused);
      await expectRefused('ip4', from('203.0.114.1'), 403, 'ACCESS_NOT_ENABLED', refused);
      await expectRefused('ip4', from('0xCB007109'), 403, 'ACCESS_NOT_ENABLED', refused);
      await expectRefused('ip4', from('not-an-ip'), 403, 'ACCESS_NOT_ENABLED', refused);
      await expectRefused('ip4', from('203.0.113.255, 10.0.0.1'), 403, 'ACCESS_NOT_ENABLED', refused);
    });
    it('TRUST_PROXY set: the address the trusted proxy added counts, not one the client wrote before it', async () => {
      await expectOk('office', from('10.1.2.3'));
      await expectOk('office', from('198.51.100.1, 10.1.2.3'));
      await expectRefused('office', from('10.1.2.3, 198.51.100.1'), 403, 'ACCESS_NOT_ENABLED', refused);
      await expectRefused('office', {}, 403, 'ACCESS_NOT_ENABLED', refused);
    });
    it('IPv6: accepts inside the /48, refuses outside and IPv4', async () => {
      await expectOk('ip6', from('2001:db8:abcd:12::1'));
      await expectOk('ip6', from('2001:DB8:ABCD::'));
      await expectRefused('ip6', from('2001:db8:abce::1'), 403, 'ACCESS_NOT_ENABLED', refused);
      await expectRefused('ip6', {}, 403, 'ACCESS_NOT_ENABLED', refused);
    });
    it('parses bare addresses and CIDRs of both families; matches across forms', () => {
      const ranges = ['10.0.0.0/8', '2001:db8::/32', '192.0.2.1', '::ffff:198.51.100.0/120'].map(parseCidr);
      expect(ipAllowed('10.255.1.2', ranges)).to.equal(true);
      expect(ipAllowed('11.0.0.1', ranges)).to.equal(false);
      expect(ipAllowed('192.0.2.1', ranges)).to.equal(true);
      expect(ipAllowed('192.0.2.2', ranges)).to.equal(false);
      expect(ipAllowed('2001:0db8:0000::7', ranges)).to.equal(true);
      expect(ipAllowed('fe80::1%eth0', ranges)).to.equal(false);
      expect(ipAllowed('198.51.100.200', ranges), 'IPv4-mapped CIDR applies to IPv4').to.equal(true);
      expect(ipAllowed('::ffff:10.1.1.1', ranges), 'IPv4-mapped address counts as IPv4').to.equal(true);
      for (const bad of ['10.0.0.0/33', '2001:db8::/129', '10.0.0/8', 'example.com', '10.0.0.0/x']) {
        expect(() => parseCidr(bad), bad).to.throw(/not an IPv4 or IPv6|prefix/);
      }
    });
  });

  describe('several mechanisms', () => {
    it('every listed mechanism must pass', async () => {
      const raw = JSON.stringify(body);
      const ts = Math.floor(Date.now() / 1000);
      const sig = createHmac('sha256', HMAC_SECRET).update(`${ts}.${raw}`).digest('hex');
      const all = { 'x-api-key': KEY_1, 'x-signature': sig, 'x-signature-timestamp': String(ts) };
      await expectOk('combo', all, raw);
      await expectRefused('combo', { ...all, 'x-api-key': KEY_2 }, 401, 'INVALID_CREDENTIALS', /X-Api-Key/, raw);
      await expectRefused('combo', { ...all, 'x-signature': sig.replace(/^./, (c) => (c === '0' ? '1' : '0')) }, 401, 'INVALID_CREDENTIALS', /does not match/, raw);
      await expectRefused('combo', { ...all, 'x-forwarded-for': '203.0.113.5' }, 403, 'ACCESS_NOT_ENABLED', /not allowed from this address/, raw);
    });
  });
});

describe('custom endpoints: ip_allow without TRUST_PROXY', () => {
  let root: string;
  let s: TestApp;
  let a: TestAccount;
  before(async () => {
    root = customersRoot();
    writeEndpoint(root, 'sec', 'office', { config: { description: 'office', auth: [{ type: 'ip_allow', cidrs: ['10.1.2.0/24'] }] } });
    writeEndpoint(root, 'sec', 'local', { config: { description: 'local', auth: [{ type: 'ip_allow', cidrs: ['127.0.0.1'] }] } });
    s = await startTestApp({ CUSTOMERS_DIR: root });
    a = await s.account({ tier: 'CUSTOM' });
    await s.accounts.update(a.scriptId, { customer: 'sec' });
  });
  after(async () => {
    await s.close();
    rmSync(root, { recursive: true, force: true });
  });
  const post = (name: string, xff?: string) => s.post(`/service/custom/${name}`, { n: 1 },
    { account: a, query: `id=${a.scriptId}&env=test`, headers: xff === undefined ? {} : { 'x-forwarded-for': xff } });

  it('one forged X-Forwarded-For header no longer passes a 10.1.2.0/24 list', async () => {
    const r = await post('office', '10.1.2.3');
    expect(r.status, r.text).to.equal(403);
    expect(r.body.error_code).to.equal('ACCESS_NOT_ENABLED');
  });

  it('the socket address decides, whatever the header says', async () => {
    expect((await post('local')).status).to.equal(200);
    expect((await post('local', '198.51.100.1')).status).to.equal(200);
  });
});
