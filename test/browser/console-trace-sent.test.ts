// The trace in Chromium shows the request an attempt sent (its own webhook-timestamp, the
// body's size and SHA-256), labelled as sent, not one rebuilt when the trace is opened.
// Skipped (loudly) when /usr/bin/chromium is missing.
import { expect } from 'chai';
import { createHash, randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import type { TestAccount, TestServer } from '../helpers/test-server.ts';
import type { DestinationDouble } from '../helpers/destination-double.ts';
import { checkout, WEBHOOK_SECRET } from '../delivery/delivery-fixture.ts';
import { openWebhookShop, type WebhookShop } from './console-session.ts';

const ADMIN_TOKEN = `console-sent-${randomBytes(12).toString('hex')}`;
const WAIT = 15_000;

describe('console in a browser: the trace shows the request as sent', function () {
  this.timeout(120_000);
  let s: TestServer;
  let hook: DestinationDouble;
  let shop: TestAccount;
  let page: Page;
  let pageProblems: string[] = [];

  let w: WebhookShop | undefined;

  before(async function () {
    w = await openWebhookShop(this, { suite: 'test/browser/console-trace-sent.test.ts', token: ADMIN_TOKEN, name: 'Sent shop', timeoutMs: WAIT });
    ({ s, hook, shop, page, problems: pageProblems } = w);
  });

  after(() => w?.close());

  it('labels the request as sent by attempt 1 and shows its timestamp header and body digest', async () => {
    expect((await s.post('/webhooks/service/event', checkout('ORD-S1'), { account: shop })).status).to.equal(200);
    await hook.waitFor(() => hook.requests.some((q) => q.json<{ id?: string }>().id === 'ORD-S1'), WAIT, 'ORD-S1 delivered');
    const sent = hook.requests.find((q) => q.json<{ id?: string }>().id === 'ORD-S1')!;
    await page.click('#nav [data-view="trace"]');
    await page.fill('#trace-q', 'ORD-S1');
    await page.click('#trace-go');
    const delivery = page.locator('.trace-delivery').first();
    await delivery.locator('.trace-status[data-status="delivered"]').waitFor();
    await delivery.locator('.trace-request-source[data-source="sent"]').waitFor();
    expect(await delivery.locator('.trace-request-source').textContent()).to.contain('as sent by attempt 1');
    const request = (await delivery.locator('.trace-request').textContent()) ?? '';
    expect(request).to.contain(`"webhook-timestamp": "${sent.headers['webhook-timestamp']}"`);
    expect(request).not.to.contain(WEBHOOK_SECRET.slice(6));
    expect(await delivery.locator('.trace-request-digest').textContent()).to.contain(createHash('sha256').update(sent.body).digest('hex'));
    // The attempt succeeded, so only the digest was kept: the body shown is mapped again, and says its digest matches.
    expect(await delivery.locator('.trace-request-digest').getAttribute('data-body-source')).to.equal('rebuilt');
    expect(await delivery.locator('.trace-request-digest').textContent()).to.contain('its SHA-256 equals the one sent');
    expect(request).to.contain('"id": "ORD-S1"');
    expect(pageProblems).to.deep.equal([]);
  });
});
