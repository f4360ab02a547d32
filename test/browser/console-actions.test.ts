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
import { layoutProblems, offScreen, PHONE } from './phone-layout.ts';

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

  it('live: a row shows the time in UTC, the account name, the intake endpoint and the first error code', async () => {
    await nav('live');
    await send(checkout('ORD-L-BAD', { event: { name: 'checkout_completed', id: 'ORD-L-BAD', value: 5, currency: 'EURO' } }));
    const row = page.locator('.live-row[data-event-id="ORD-L-BAD"]');
    await row.waitFor();
    const [stored] = await s.running.store.events.list({ search: 'ORD-L-BAD', limit: 1 });
    const code = stored.errors[0].code;
    expect(await text(row.locator('.live-first-error'))).to.equal(code);
    expect(await text(row.locator('.live-source'))).to.equal(stored.source);
    await row.locator('.live-account', { hasText: 'Actions shop' }).waitFor();
    expect(await text(row.locator('.live-account'))).to.contain(shop.scriptId);
    const at = new Date(stored.receivedAt).toISOString().replace('T', ' ').replace('Z', ' UTC');
    expect(await text(row.locator('.live-time'))).to.equal(at);
  });

  it('live: the detail labels the stored payload (normalised, or the body as received) and the time carries its zone', async () => {
    const bad = page.locator('.live-row[data-event-id="ORD-L-BAD"]');
    await bad.click();
    await page.locator('#live-detail .live-payload').waitFor();
    expect(await text(page.locator('#live-detail .live-payload-label'))).to.match(/^Body as received/);
    expect(await text(page.locator('#live-detail'))).to.contain(' UTC').and.contain('Actions shop');

    await send(checkout('ORD-L-OK'));
    const ok = page.locator('.live-row[data-event-id="ORD-L-OK"]');
    await ok.click();
    await page.locator('#live-detail .live-payload').waitFor();
    expect(await text(page.locator('#live-detail .live-payload-label'))).to.match(/^Normalised event/);
    expect(await text(page.locator('#live-detail .live-payload-note'))).to.contain('not kept');
    expect(await text(ok.locator('.live-first-error'))).to.equal('');
  });

  it('live: a filter that excludes the event in the side panel closes the panel', async () => {
    const detail = page.locator('#live-detail');
    expect(await detail.isVisible()).to.equal(true);
    await page.selectOption('#live-filter-status', 'rejected');
    await page.locator('.live-row[data-event-id="ORD-L-BAD"]').waitFor();
    expect(await detail.isVisible(), 'the accepted ORD-L-OK is filtered out').to.equal(false);

    await page.locator('.live-row[data-event-id="ORD-L-BAD"]').click();
    await page.locator('#live-detail .live-payload').waitFor();
    await page.selectOption('#live-filter-status', '');
    await page.locator('.live-row[data-event-id="ORD-L-OK"]').waitFor();
    expect(await detail.isVisible(), 'ORD-L-BAD still matches').to.equal(true);
  });

  it('at a phone\'s width live and destinations fit, their status, counts and actions on screen (not in a box scrolled sideways)', async () => {
    // A pending (503, an hour's wait) and a failed (307) delivery: Retry now and Replay are offered, counts are not all 0.
    answers.set('ORD-PH1', 503);
    answers.set('ORD-PH2', 307);
    await send(checkout('ORD-PH1'));
    await send(checkout('ORD-PH2'));
    await deliveryStatus('ORD-PH1', 'pending');
    await deliveryStatus('ORD-PH2', 'failed');
    await page.setViewportSize(PHONE);
    try {
      await page.locator('.live-row[data-event-id="ORD-PH2"]').waitFor();
      const problems = await layoutProblems(page, 'live', 'tracklane id');
      problems.push(...await offScreen(page, 'live', ['.live-row .live-status .status', '.live-row .live-count', '#live-pause', '#live-detail .live-trace']));
      await nav('destinations');
      const row = page.locator(`.dest-row[data-destination-id="${destId}"]`);
      await row.locator('.dest-replay').waitFor();
      expect(await row.locator('.dest-actions button').allTextContents()).to.deep.equal(['Retry now', 'Pause', 'Replay failed/dead']);
      problems.push(...await layoutProblems(page, 'destinations'));
      problems.push(...await offScreen(page, 'destinations', ['.dest-row .dest-state', '.dest-row .dest-count', '.dest-row .dest-actions button']));
      expect(problems).to.deep.equal([]);
      expect(await page.evaluate('document.documentElement.scrollWidth')).to.be.at.most(PHONE.width);
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('no CSP violation and no uncaught error in the page', () => {
    expect(pageProblems).to.deep.equal([]);
  });
});
