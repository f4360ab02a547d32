// METRICS_TOKEN: when set, /metrics needs the bearer token (401 otherwise); unset, it is open.
import { expect } from 'chai';
import { loadConfig } from '../../src/config.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const TOKEN = 'prom-scrape-token-0123456789';

describe('http: /metrics and METRICS_TOKEN', () => {
  let s: TestApp;
  let open: TestApp;
  before(async () => {
    s = await startTestApp({ METRICS_TOKEN: TOKEN });
    open = await startTestApp();
  });
  after(async () => {
    await s.close();
    await open.close();
  });
  const get = (server: TestApp, auth?: string) =>
    fetch(`${server.url}/metrics`, { headers: auth === undefined ? {} : { authorization: auth } });

  it('answers 401 AUTH_MISSING without a token and INVALID_CREDENTIALS with a wrong one, naming the scheme', async () => {
    const none = await get(s);
    expect(none.status).to.equal(401);
    expect(none.headers.get('www-authenticate')).to.equal('Bearer realm="metrics"');
    expect(await none.json()).to.include({ code: 'AUTH_MISSING' });
    for (const wrong of [`Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, TOKEN, 'Basic abc']) {
      const r = await get(s, wrong);
      expect(r.status, wrong).to.equal(401);
      expect(((await r.json()) as { code: string }).code, wrong).to.equal(wrong.startsWith('Bearer') ? 'INVALID_CREDENTIALS' : 'AUTH_MISSING');
    }
  });

  it('serves the Prometheus text with the right bearer token; other ops endpoints stay open', async () => {
    const r = await get(s, `Bearer ${TOKEN}`);
    expect(r.status).to.equal(200);
    expect(await r.text()).to.contain('process_cpu_user_seconds_total');
    expect((await fetch(`${s.url}/healthz`)).status).to.equal(200);
  });

  it('is open when METRICS_TOKEN is unset; a short token stops start-up', async () => {
    expect((await get(open)).status).to.equal(200);
    expect(() => loadConfig({ METRICS_TOKEN: 'short' })).to.throw('METRICS_TOKEN must be at least 16 characters');
  });
});
