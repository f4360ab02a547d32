// The console in Chromium masks a user's e-mail, phone, names and address in the live
// detail and the trace; "Reveal identifiers" shows them for that one event, and the server
// logs the reveal with the admin token's name. Skipped (loudly) when /usr/bin/chromium is missing.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import type { Locator, Page } from 'playwright-core';
import type { TestAccount, TestServer } from '../helpers/test-server.ts';
import type { DestinationDouble } from '../helpers/destination-double.ts';
import { checkout } from '../delivery/delivery-fixture.ts';
import { openWebhookShop, type WebhookShop } from './console-session.ts';

const ADMIN_TOKEN = `console-ids-${randomBytes(12).toString('hex')}`;
const WAIT = 15_000;

describe('console in a browser: identifiers masked until revealed', function () {
  this.timeout(120_000);
  let s: TestServer;
  let hook: DestinationDouble;
  let shop: TestAccount;
  let page: Page;
  const lines: any[] = [];
  let pageProblems: string[] = [];
  const text = (l: Locator) => l.textContent().then((t) => t ?? '');

  let w: WebhookShop | undefined;

  before(async function () {
    const sink = new Writable({ write(chunk, _enc, cb) { for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l)); cb(); } });
    w = await openWebhookShop(this, {
      suite: 'test/browser/console-identifiers.test.ts', token: ADMIN_TOKEN, name: 'Identifiers shop', timeoutMs: WAIT,
      env: { ADMIN_TOKENS: `ops.ana:${ADMIN_TOKEN}`, ALLOW_PRIVATE_DESTINATIONS: '1' }, server: { logger: pino({ level: 'info' }, sink) as never },
    });
    ({ s, hook, shop, page, problems: pageProblems } = w);
  });

  after(() => w?.close());

  const EMAIL = 'buyer-ORD-ID1@example.com';
  const PHONE = '+40 721 234 567';

  it('the live detail shows the payload with identifiers masked; Reveal shows them and is logged', async () => {
    const r = await s.post('/webhooks/service/event', checkout('ORD-ID1'), { account: shop });
    expect(r.status, r.text).to.equal(200);
    const row = page.locator('.live-row[data-event-id="ORD-ID1"]');
    await row.waitFor();
    await row.click();
    const payload = page.locator('#live-detail .live-payload');
    await payload.waitFor();
    expect(JSON.parse(await text(payload)).user).to.include({ email: '[masked]', phone: '[masked]' });
    expect(await page.content()).not.to.contain(EMAIL);
    expect(lines.filter((l) => l.msg === 'admin reveal')).to.have.length(0);

    await page.click('#live-detail .live-reveal');
    await page.locator('#live-detail .identifiers-state[data-state="revealed"]').waitFor();
    expect(JSON.parse(await text(payload)).user).to.include({ email: EMAIL, phone: PHONE });
    const line = lines.find((l) => l.msg === 'admin reveal');
    expect(line.admin).to.include({ author: 'ops.ana', what: 'event.identifiers' });
  });

  it('the trace masks them in the payload and the native request until revealed', async () => {
    await hook.waitFor(() => hook.requests.some((q) => q.json<{ id?: string }>().id === 'ORD-ID1'), WAIT, 'ORD-ID1 delivered');
    await page.click('#nav [data-view="trace"]');
    await page.fill('#trace-q', 'ORD-ID1');
    await page.click('#trace-go');
    const delivery = page.locator('.trace-delivery').first();
    await delivery.locator('.trace-status[data-status="delivered"]').waitFor();
    await page.locator('#trace-detail .identifiers-state[data-state="masked"]').waitFor();
    expect(JSON.parse(await text(page.locator('.trace-payload'))).user.email).to.equal('[masked]');
    expect(await text(page.locator('#trace-detail'))).not.to.contain(EMAIL);
    const before = lines.filter((l) => l.msg === 'admin reveal').length;

    await page.click('.trace-reveal');
    await page.locator('#trace-detail .identifiers-state[data-state="revealed"]').waitFor();
    expect(JSON.parse(await text(page.locator('.trace-payload'))).user.email).to.equal(EMAIL);
    expect(lines.filter((l) => l.msg === 'admin reveal')).to.have.length(before + 1);
    await page.click('.trace-mask');
    await page.locator('#trace-detail .identifiers-state[data-state="masked"]').waitFor();
    expect(await text(page.locator('#trace-detail'))).not.to.contain(EMAIL);
    expect(pageProblems).to.deep.equal([]);
  });
});
