// Logs carry the request id on every line and never the token, secrets or plaintext PII.
import { expect } from 'chai';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { startServer, type Running } from '../../src/server.ts';
import { createAccountService } from '../../src/accounts/account-service.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { tempDir } from '../helpers/test-server.ts';

describe('logging', () => {
  const lines: string[] = [];
  let running: Running;
  let dir: string;
  before(async () => {
    dir = tempDir();
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        cb();
      },
    });
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'trace' });
    running = await startServer(config, { logger: createLogger('trace', sink) });
  });
  after(async () => {
    await running.close(500);
    rmSync(dir, { recursive: true, force: true });
  });

  it('never writes the token, the e-mail or the phone, and tags every request line with its id', async () => {
    const { account, accessToken } = await createAccountService(running.store).create({ name: 'Log shop', tier: 'FLEX', addon: true });
    const body = {
      event: { name: 'checkout_completed', id: 'ORD-LOG-1', value: 10, currency: 'EUR' },
      context: { environment: 'prod', data_source: 'website' },
      products: [{ id: 'P1', name: 'Thing', category: 'Stuff', price_base: 10, price: 10, tax_percent: 19 }],
      user: { email: 'secret.person@example.com', phone: '+40722999888' },
    };
    const send = (path: string, token: string, query = `id=${account.scriptId}`) =>
      fetch(`${running.url}${path}?${query}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-service-access-token': token }, body: JSON.stringify(body) });
    const ids = [];
    for (const path of Object.values(INTAKE_PATHS)) ids.push((await send(path, accessToken)).headers.get('x-request-id'));
    ids.push((await send(INTAKE_PATHS.event, accessToken + 'wrong')).headers.get('x-request-id'));
    ids.push((await send(INTAKE_PATHS.event, accessToken, `id=${account.scriptId}&access_token=${accessToken}`)).headers.get('x-request-id'));
    await running.writer.drain();

    const all = lines.join('\n');
    expect(all).to.not.include(accessToken);
    expect(all).to.not.include(accessToken.slice(4));
    expect(all).to.not.include('secret.person');
    expect(all).to.not.include('722999888');
    for (const id of ids) {
      const mine = lines.filter((l) => l.includes(id!));
      expect(mine.length, `lines for ${id}`).to.be.greaterThan(0);
      for (const l of mine) expect(JSON.parse(l).reqId).to.equal(id);
    }
    const requestLines = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
    expect(requestLines.length).to.equal(ids.length);
    for (const l of requestLines) expect(l.reqId).to.be.a('string');
  });

  it('logs the health and readiness probes at debug, every other request at info', async () => {
    const levelOf = async (path: string) => {
      const id = (await fetch(`${running.url}${path}`)).headers.get('x-request-id');
      const line = lines.map((l) => JSON.parse(l)).find((l) => l.reqId === id && l.msg === 'request');
      return [path, line?.level];
    };
    expect([await levelOf('/healthz'), await levelOf('/readyz'), await levelOf('/no-such-path')])
      .to.deep.equal([['/healthz', 20], ['/readyz', 20], ['/no-such-path', 30]]);
  });
});
