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
  const answers = new Map<string, number>();

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
    // The webhook answers per event id as `answers` says (default 200); a 503 asks for an hour's wait.
    hook.otherwise((req) => {
      const status = answers.get(req.json<{ id?: string }>().id ?? '') ?? 200;
      return status === 503 ? { status, headers: { 'retry-after': '3600' }, body: { error: 'down' } } : { status, body: {} };
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

  /** Requests the webhook double received for an event id. */
  const received = (eventId: string) => hook.requests.filter((r) => r.json<{ id?: string }>().id === eventId).length;

  /** The next dialog is accepted (or dismissed); resolves to its message. */
  function answerDialog(accept: boolean): Promise<string> {
    return new Promise((resolve) => page.once('dialog', (d) => {
      resolve(d.message());
      void (accept ? d.accept() : d.dismiss());
    }));
  }

  async function destinationEnabled(): Promise<boolean> {
    const res = await fetch(`${s.url}/admin/destinations?script_id=${shop.scriptId}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    return ((await res.json()) as { items: any[] }).items.find((d) => d.id === destId).enabled;
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

  it('destinations: retry now sends a backing-off delivery at once, only after confirming', async () => {
    answers.set('ORD-A1', 503);
    await send(checkout('ORD-A1'));
    await hook.waitFor(() => received('ORD-A1') === 1, WAIT, 'the first attempt of ORD-A1');
    await deliveryStatus('ORD-A1', 'pending');
    answers.set('ORD-A1', 200);
    await nav('destinations');
    const row = page.locator(`.dest-row[data-destination-id="${destId}"]`);
    await row.locator('.dest-retry').waitFor();

    const dismissed = answerDialog(false);
    await row.locator('.dest-retry').click();
    expect(await dismissed).to.contain('flaky hook');
    const accepted = answerDialog(true);
    await page.locator(`.dest-row[data-destination-id="${destId}"] .dest-retry`).click();
    await accepted;
    await hook.waitFor(() => received('ORD-A1') === 2, WAIT, 'ORD-A1 sent again by retry now');
    await deliveryStatus('ORD-A1', 'delivered');
    await page.locator('#toast', { hasText: 'due now' }).waitFor();
  });

  it('destinations: pause disables the destination and enable brings it back, each confirmed', async () => {
    const row = () => page.locator(`.dest-row[data-destination-id="${destId}"]`);
    let asked = answerDialog(true);
    await row().locator('.dest-pause').click();
    expect(await asked).to.match(/^Pause webhook · flaky hook/);
    await row().locator('.dest-enable').waitFor();
    expect(await destinationEnabled()).to.equal(false);
    asked = answerDialog(true);
    await row().locator('.dest-enable').click();
    await asked;
    await row().locator('.dest-pause').waitFor();
    expect(await destinationEnabled()).to.equal(true);
  });

  it('destinations: replay failed/dead says how many (a dry run) before re-queueing them', async () => {
    answers.set('ORD-A3', 307); // a redirect: failed at once (permanent)
    await send(checkout('ORD-A3'));
    await deliveryStatus('ORD-A3', 'failed');
    answers.set('ORD-A3', 200);
    await page.click('#dest-refresh');
    const replay = page.locator(`.dest-row[data-destination-id="${destId}"] .dest-replay`);
    await replay.waitFor();
    const asked = answerDialog(true);
    await replay.click();
    expect(await asked).to.match(/^Re-queue 1 failed or dead deliveries of webhook · flaky hook/);
    await hook.waitFor(() => received('ORD-A3') === 2, WAIT, 'ORD-A3 replayed');
    await deliveryStatus('ORD-A3', 'delivered');
  });

  it('trace: a pending delivery offers retry now and pause for its destination', async () => {
    answers.set('ORD-A4', 503);
    await send(checkout('ORD-A4'));
    await hook.waitFor(() => received('ORD-A4') === 1, WAIT, 'the first attempt of ORD-A4');
    await deliveryStatus('ORD-A4', 'pending');
    answers.set('ORD-A4', 200);
    await nav('trace');
    await page.fill('#trace-q', 'ORD-A4');
    await page.click('#trace-go');
    const actions = page.locator('.trace-delivery .trace-actions');
    await actions.locator('.dest-retry').waitFor();
    expect(await actions.locator('.dest-pause').count()).to.equal(1);
    const asked = answerDialog(true);
    await actions.locator('.dest-retry').click();
    await asked;
    await hook.waitFor(() => received('ORD-A4') === 2, WAIT, 'ORD-A4 sent again by retry now');
    await page.locator('.trace-delivery .trace-status[data-status="delivered"]').waitFor();
  });
});
