// The console's operator actions and what the live view tells, in Debian's Chromium: a custom
// endpoint's refusal shown with its own body; retry now, pause/resume and replay of failing
// deliveries, each confirmed; live rows with the first error code, intake endpoint and account
// name, times in UTC, the stored payload labelled, and a filter closing a panel it excludes.
// Skipped (loudly) when /usr/bin/chromium is missing.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import type { Locator, Page } from 'playwright-core';
import { startTestServer, waitFor, type TestAccount, type TestServer } from '../helpers/test-server.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { checkout, SETTINGS } from '../delivery/delivery-fixture.ts';
import { launchChromium, type Chromium } from './chromium.ts';

const ADMIN_TOKEN = `console-actions-${randomBytes(12).toString('hex')}`;
const WAIT = 15_000;

describe('console in a browser: actions on failing deliveries, error bodies, the live view', function () {
  this.timeout(120_000);
  let chromium: Chromium;
  let s: TestServer;
  let hook: DestinationDouble;
  let shop: TestAccount;
  let destId: string;
  let page: Page;
  const pageProblems: string[] = [];

  before(async function () {
    chromium = await launchChromium(this, 'test/browser/console-actions.test.ts');
    hook = await startDestinationDouble();
    s = await startTestServer({ ADMIN_TOKEN, ALLOW_PRIVATE_DESTINATIONS: '1' });
    shop = await s.account({ name: 'Actions shop', country: 'RO' });
    await s.accounts.update(shop.scriptId, { customer: 'demo' });
    destId = `dst_${randomBytes(8).toString('hex')}`;
    await s.running.store.destinations.add({
      id: destId, scriptId: shop.scriptId, type: 'webhook', name: 'flaky hook', enabled: true, settings: SETTINGS.webhook(hook.url),
    });
    page = await chromium.page();
    page.setDefaultTimeout(WAIT);
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) pageProblems.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => pageProblems.push(`pageerror: ${e.message}`));
    await page.goto(`${s.url}/console`);
    await page.fill('#token-input', ADMIN_TOKEN);
    await page.click('#token-submit');
    await page.locator('#live-state[data-state="open"]').waitFor();
  });

  after(async () => {
    await chromium?.close();
    await s?.close();
    await hook?.close();
  });

  const text = (l: Locator) => l.textContent().then((t) => t ?? '');
  const nav = (view: string) => page.click(`#nav [data-view="${view}"]`);

  /** Sends one event through endpoint 1. */
  async function send(payload: Record<string, unknown>): Promise<void> {
    const r = await s.post('/webhooks/service/event', payload, { account: shop });
    expect(r.status, r.text).to.equal(200);
  }

  /** The webhook deliveries of an event, as the admin API lists them. */
  async function deliveries(eventId: string): Promise<any[]> {
    const res = await fetch(`${s.url}/admin/deliveries?event_id=${encodeURIComponent(eventId)}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    return ((await res.json()) as { items: any[] }).items;
  }

  async function deliveryStatus(eventId: string, status: string): Promise<void> {
    const deadline = Date.now() + WAIT;
    while (Date.now() < deadline) {
      if ((await deliveries(eventId)).some((d) => d.status === status)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no ${status} delivery of ${eventId}: ${JSON.stringify(await deliveries(eventId))}`);
  }

  it('custom endpoints: a refused test run shows the endpoint\'s own answer (messages, error_code, error_context)', async () => {
    await nav('custom');
    const row = page.locator('.custom-row[data-customer="demo"][data-endpoint="supply-chain-event"]');
    await row.waitFor();
    await row.locator('.custom-send').click();
    const out = row.locator('.custom-out');
    await waitFor(async () => (await text(out)).startsWith('{'), WAIT);
    const shown = JSON.parse(await text(out));
    expect(shown.http_status).to.equal(400);
    expect(shown.error_code).to.equal('CUSTOM_VALIDATION_ERROR');
    expect(shown.error_context.field).to.equal('events[0].event.name');
    expect(shown.messages.join('\n')).to.contain('"order_delivered" is not approved for this account');
    expect(await text(page.locator('#toast'))).to.contain('is not approved').and.contain('CUSTOM_VALIDATION_ERROR');
  });
});
