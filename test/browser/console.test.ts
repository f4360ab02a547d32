// The operator console end to end, in Debian's Chromium: the real service in-process with
// ADMIN_TOKEN, one account with a webhook destination on a loopback double. Token form,
// live stream, trace with the native request and attempts, replay, destinations, rules
// (check, diff, preview, publish, the next delivery uses them, roll back), custom endpoint
// test runs, each view at a phone's width, and attacker markup in a payload rendered as text.
// Each view is screenshotted (into docs/console/ with TRACKLANE_SCREENSHOTS=1). Skipped (loudly)
// when /usr/bin/chromium is missing.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Locator, Page } from 'playwright-core';
import { startTestServer, waitFor, type TestAccount, type TestServer } from '../helpers/test-server.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { checkout, SETTINGS, WEBHOOK_SECRET } from '../delivery/delivery-fixture.ts';
import { launchChromium, type Chromium } from './chromium.ts';
import { layoutProblems, PHONE } from './phone-layout.ts';

const ADMIN_TOKEN = `console-test-${randomBytes(12).toString('hex')}`;
// The README's screenshots are rewritten only on request (TRACKLANE_SCREENSHOTS=1), so a
// test run leaves the tree clean; otherwise they are still taken, into a temp folder.
const SHOTS = process.env.TRACKLANE_SCREENSHOTS === '1'
  ? fileURLToPath(new URL('../../docs/console/', import.meta.url))
  : `${mkdtempSync(join(tmpdir(), 'tl-console-shots-'))}/`;
const RULES_FILE = fileURLToPath(new URL('../../plugins/webhook/rules.json', import.meta.url));
const XSS = '<img src=x onerror="window.__xss=1"><script>window.__xss=1</script>';
const WAIT = 15_000;

describe('console in a browser: live, trace, destinations, rules, custom endpoints', function () {
  this.timeout(120_000);
  let chromium: Chromium;
  let s: TestServer;
  let hook: DestinationDouble;
  let shop: TestAccount;
  let destId: string;
  let page: Page;
  /** CSP violations and uncaught page errors: there must be none. */
  const pageProblems: string[] = [];
  const rulesFileBefore = readFileSync(RULES_FILE, 'utf8');

  before(async function () {
    chromium = await launchChromium(this, 'test/browser/console.test.ts');
    mkdirSync(SHOTS, { recursive: true });
    hook = await startDestinationDouble();
    s = await startTestServer({ ADMIN_TOKEN, ALLOW_PRIVATE_DESTINATIONS: '1' });
    shop = await s.account({ name: 'Console shop', country: 'RO' });
    await s.accounts.update(shop.scriptId, { customer: 'demo' });
    destId = `dst_${randomBytes(8).toString('hex')}`;
    await s.running.store.destinations.add({
      id: destId, scriptId: shop.scriptId, type: 'webhook', name: 'orders hook', enabled: true, settings: SETTINGS.webhook(hook.url),
    });
    page = await chromium.page();
    page.setDefaultTimeout(WAIT);
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) pageProblems.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => pageProblems.push(`pageerror: ${e.message}`));
  });

  after(async () => {
    await chromium?.close();
    await s?.close();
    await hook?.close();
  });

  /** Sends one event through endpoint 1. */
  async function send(payload: Record<string, unknown>): Promise<void> {
    const r = await s.post('/webhooks/service/event', payload, { account: shop });
    expect(r.status, r.text).to.equal(200);
  }

  /** What the webhook double received for an event id (the webhook body's `id`). */
  const received = (eventId: string) => hook.requests.filter((r) => r.json<{ id?: string }>().id === eventId);

  async function receivedOnce(eventId: string): Promise<any> {
    await hook.waitFor(() => received(eventId).length > 0, WAIT, `the webhook delivery of ${eventId}`);
    return received(eventId)[0].json();
  }

  /** Calls the admin API from the test (to wait for server-side state, not to drive the console). */
  async function admin(path: string, body?: unknown): Promise<any> {
    const res = await fetch(`${s.url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    expect(res.status, `${path}: ${res.status}`).to.be.lessThan(300);
    return res.json();
  }

  /** Waits until the live webhook rules (as the service plans with them) put `marker` in data.console_marker. */
  async function liveMarker(marker: string | null, eventId: string): Promise<void> {
    const live = await admin('/admin/rules/webhook?scope=default');
    const ok = await waitFor(async () => {
      const p = await admin('/admin/rules/webhook/preview', { scope: 'default', document: live.document, event_id: eventId });
      const body = p.before?.[0]?.requests?.[0]?.body;
      return (body?.data?.console_marker ?? null) === marker;
    }, WAIT, 100);
    expect(ok, `live rules with console_marker ${marker}`).to.equal(true);
  }

  const text = (l: Locator) => l.textContent().then((t) => t ?? '');
  /** A screenshot of the viewport for docs/console/ (a passing toast hidden first). */
  const shot = async (name: string) => {
    await page.evaluate("document.getElementById('toast').hidden = true");
    await page.screenshot({ path: `${SHOTS}${name}.png` });
  };
  const nav = (view: string) => page.click(`#nav [data-view="${view}"]`);

  let firstId: string;

  it('asks for the token: a wrong one is refused with a message, the right one opens the live stream', async () => {
    await page.goto(`${s.url}/console`);
    await page.locator('#token-form').waitFor();
    expect(await page.locator('#nav').isVisible()).to.equal(false);
    await page.fill('#token-input', 'not-the-admin-token-at-all');
    await page.click('#token-submit');
    await page.locator('#token-message').waitFor();
    expect(await text(page.locator('#token-message'))).to.contain('401');
    expect(await page.evaluate('sessionStorage.length')).to.equal(0);

    await page.fill('#token-input', ADMIN_TOKEN);
    await page.click('#token-submit');
    await page.locator('#view-live').waitFor();
    await page.locator('#live-state[data-state="open"]').waitFor();
    expect(await page.locator('#view-trace').isVisible()).to.equal(false);
  });

  it('an event sent to endpoint 1 appears in the live view; its detail shows the payload', async () => {
    await send(checkout('ORD-C1'));
    const row = page.locator('.live-row[data-event-id="ORD-C1"]');
    await row.waitFor();
    firstId = (await row.getAttribute('data-id'))!;
    expect(firstId).to.be.a('string').and.not.equal('');
    const cells = await text(row);
    expect(cells).to.contain(shop.scriptId).and.contain('checkout_completed').and.contain('accepted');

    await row.click();
    const payload = page.locator('#live-detail .live-payload');
    await payload.waitFor();
    const shown = JSON.parse(await text(payload));
    expect(shown.event).to.include({ id: 'ORD-C1', name: 'checkout_completed' });
    // Identifiers are masked until the operator asks (a request the server logs).
    expect(shown.user.email).to.equal('[masked]');
    await page.click('#live-detail .live-reveal');
    await page.locator('#live-detail [data-state="revealed"]').waitFor();
    const revealed = JSON.parse(await text(page.locator('#live-detail .live-payload')));
    expect(revealed.user.email).to.equal('buyer-ORD-C1@example.com');
  });

  it('pause holds new events as "N new" and shows them on resume', async () => {
    await page.click('#live-pause');
    await send(checkout('ORD-C2'));
    await page.locator('#live-pending', { hasText: '1 new' }).waitFor();
    expect(await page.locator('.live-row[data-event-id="ORD-C2"]').count()).to.equal(0);
    await page.click('#live-pause');
    await page.locator('.live-row[data-event-id="ORD-C2"]').waitFor();
    expect(await page.locator('#live-pending').isVisible()).to.equal(false);
    const ids = await Promise.all((await page.locator('.live-row').all()).map((tr) => tr.getAttribute('data-event-id')));
    expect(ids.indexOf('ORD-C2'), 'newest on top').to.be.lessThan(ids.indexOf('ORD-C1'));
  });

  it('the status filter re-opens the stream: only rejected events are listed', async () => {
    await page.selectOption('#live-filter-status', 'rejected');
    await page.locator('#live-state[data-state="open"]').waitFor();
    await send(checkout('ORD-OK-F'));
    await send(checkout('ORD-BAD-F', { event: { name: 'checkout_completed', id: 'ORD-BAD-F', value: 5, currency: 'EURO' } }));
    const bad = page.locator('.live-row[data-event-id="ORD-BAD-F"]');
    await bad.waitFor();
    expect(await bad.getAttribute('data-status')).to.equal('rejected');
    expect(await page.locator('.live-row[data-status="accepted"]').count()).to.equal(0);
    await bad.click();
    await page.locator('#live-detail .live-payload').waitFor();
    expect(await text(page.locator('#live-detail'))).to.contain('currency');

    await page.selectOption('#live-filter-status', '');
    await page.locator('.live-row[data-event-id="ORD-C1"]').waitFor();
    await page.locator('.live-row[data-event-id="ORD-C1"]').click();
    await page.locator('#live-detail .live-payload').waitFor();
    await shot('live');
  });

  it('trace: the Trace link and a search by event id show the delivery, its native request and its attempt', async () => {
    await receivedOnce('ORD-C1');
    await page.click('#live-detail .live-trace');
    await page.locator('#view-trace').waitFor();
    expect(await page.inputValue('#trace-q')).to.equal(firstId);
    await page.locator(`.trace-event[data-id="${firstId}"]`).waitFor();

    await page.fill('#trace-q', 'ORD-C1');
    await page.click('#trace-go');
    await page.locator(`.trace-hit[data-id="${firstId}"]`).waitFor();
    const delivery = page.locator('.trace-delivery').first();
    await delivery.locator('.trace-status[data-status="delivered"]').waitFor();
    await delivery.locator('.trace-attempt').first().waitFor();
    const request = await text(delivery.locator('.trace-request'));
    expect(request).to.contain('/hooks/orders').and.contain('ORD-C1');
    expect(request, 'the webhook secret is masked').not.to.contain(WEBHOOK_SECRET.slice(6));
    const attempt = await text(delivery.locator('.trace-attempt').first());
    expect(attempt).to.contain('200');
    expect(JSON.parse(await text(page.locator('.trace-payload'))).event.id).to.equal('ORD-C1');
    await shot('trace');
  });

  it('trace: a delivered delivery is replayed only after confirming, and the double receives it again', async () => {
    const replay = page.locator('.trace-delivery .trace-replay').first();
    expect(await replay.getAttribute('data-force')).to.equal('true');
    page.once('dialog', (d) => void d.dismiss());
    await replay.click();
    expect(received('ORD-C1')).to.have.length(1);

    page.once('dialog', (d) => void d.accept());
    await replay.click();
    await hook.waitFor(() => received('ORD-C1').length === 2, WAIT, 'the replayed ORD-C1');
    await page.locator('.trace-delivery .trace-status[data-status="delivered"]').waitFor();
  });

  it('destinations: the webhook with its counts', async () => {
    await nav('destinations');
    const row = page.locator(`.dest-row[data-destination-id="${destId}"]`);
    await row.waitFor();
    const cells = await row.locator('td').allTextContents();
    expect(cells.slice(0, 4)).to.deep.equal([shop.scriptId, 'webhook', 'orders hook', 'yes']);
    expect(Number(cells[5]), 'delivered').to.be.greaterThan(0);
    expect(await row.locator('.dest-resume').count(), 'not paused').to.equal(0);
    await page.selectOption('#dest-filter-account', shop.scriptId);
    await page.click('#dest-refresh');
    await row.waitFor();
    await shot('destinations');
  });

  it('rules: syntax and rule errors are listed; a draft is diffed and previewed; publish makes it live for the next delivery', async () => {
    await nav('rules');
    await page.click('.rules-item[data-scope="default"][data-destination="webhook"]');
    await waitFor(async () => (await page.inputValue('#rules-editor')).includes('"webhook.event"'), WAIT);
    const live = JSON.parse(await page.inputValue('#rules-editor'));
    expect(live.destination).to.equal('webhook');

    // A JSON syntax error is caught in the page, with its line and column.
    await page.fill('#rules-editor', '{\n  "destination": "webhook",\n  "rules": [,]\n}');
    await page.click('#rules-check');
    expect(await text(page.locator('#rules-errors .rules-error'))).to.match(/line 3, column \d+/);

    // A rule error comes back from the API as `path: message`; publishing it is refused (422).
    const broken = structuredClone(live);
    broken.rules[0].output.data = { var: 'event' };
    await page.fill('#rules-editor', JSON.stringify(broken, null, 2));
    await page.fill('#rules-message', 'console test: a broken draft');
    await page.click('#rules-check');
    await page.locator('#rules-errors .rules-error').first().waitFor();
    expect(await text(page.locator('#rules-errors .rules-error').first())).to.match(/^\/rules\/0\S*: \S/);
    await page.click('#rules-publish');
    await page.locator('#rules-errors .rules-error').first().waitFor();
    expect(await text(page.locator('#rules-errors .rules-error').first()), 'the 422 RULES_INVALID errors').to.match(/^\/rules\/0\S*: \S/);
    expect(await text(page.locator('#rules-status'))).to.equal('');

    await page.fill('#rules-editor', withMarker(JSON.stringify(live), 'v1'));
    await page.click('#rules-check');
    await page.locator('#rules-status', { hasText: 'no errors' }).waitFor();
    expect(await page.locator('#rules-errors .rules-error').count()).to.equal(0);

    await page.click('#rules-diff');
    const change = page.locator('#rules-diff-out .rules-change[data-rule-id="webhook.event"]');
    await change.waitFor();
    expect(await change.getAttribute('data-change')).to.equal('changed');
    expect(await text(change)).to.contain('console_marker');

    await page.fill('#rules-preview-event', firstId);
    await page.click('#rules-preview');
    await page.locator('#rules-preview-out .rules-preview-changed').waitFor();
    const dest = page.locator(`#rules-preview-out .rules-preview-dest[data-destination-id="${destId}"]`);
    expect(await dest.getAttribute('data-changed')).to.equal('true');
    expect(await text(dest.locator('.preview-after'))).to.contain('"console_marker": "v1"');
    expect(await text(dest.locator('.preview-before'))).not.to.contain('console_marker');

    // The same draft on a pasted payload, for the account chosen in the page.
    await page.fill('#rules-preview-event', '');
    await page.click('#view-rules details summary');
    await page.fill('#rules-preview-payload', JSON.stringify(checkout('ORD-PASTED')));
    await page.selectOption('#rules-preview-account', shop.scriptId);
    await page.click('#rules-preview');
    await page.locator('#rules-preview-out .rules-preview-changed').waitFor();
    expect(await text(page.locator(`#rules-preview-out .rules-preview-dest[data-destination-id="${destId}"] .preview-after`))).to.contain('ORD-PASTED');

    // Replay through the draft: every stored event of the webhook's account would change.
    await page.click('#rules-replay');
    const summary = page.locator('#rules-replay-out .rules-replay-summary');
    await summary.waitFor();
    expect(Number(await summary.getAttribute('data-events-changed'))).to.be.at.least(1);
    expect(await text(summary)).to.match(/^(\d+) of \1 event\(s\) would be sent differently/);

    await page.fill('#rules-message', 'console test: marker v1');
    await page.click('#rules-publish');
    const status = page.locator('#rules-status', { hasText: /published version \d+/ });
    await status.waitFor();
    const v1 = Number(/published version (\d+)/.exec(await text(status))![1]);
    const row = page.locator(`.rules-history-row[data-version="${v1}"]`);
    await row.waitFor();
    expect(await row.locator('.rules-live').count()).to.equal(1);
    expect(await text(row)).to.contain('console').and.contain('console test: marker v1');
    await page.locator('.rules-item[data-destination="webhook"][data-scope="default"]', { hasText: `v${v1}` }).waitFor();

    await liveMarker('v1', firstId);
    await send(checkout('ORD-R1'));
    expect((await receivedOnce('ORD-R1')).data.console_marker).to.equal('v1');
  });

  it('rules: a second version goes live, and rolling back to the first brings its output back', async () => {
    await page.fill('#rules-editor', withMarker(await page.inputValue('#rules-editor'), 'v2'));
    await page.fill('#rules-message', 'console test: marker v2');
    await page.click('#rules-publish');
    const status = page.locator('#rules-status', { hasText: /published version \d+/ });
    await status.waitFor();
    const v2 = Number(/published version (\d+)/.exec(await text(status))![1]);
    await liveMarker('v2', firstId);
    await send(checkout('ORD-R2'));
    expect((await receivedOnce('ORD-R2')).data.console_marker).to.equal('v2');

    const rows = page.locator('.rules-history-row');
    expect(await rows.count()).to.equal(2);
    expect(await page.locator(`.rules-history-row[data-version="${v2}"] .rules-rollback`).count(), 'no rollback on the live version').to.equal(0);
    const first = page.locator('.rules-history-row:not(.live)').first();
    const v1 = Number(await first.getAttribute('data-version'));
    page.once('dialog', (d) => void d.accept());
    await first.locator('.rules-rollback').click();
    await page.locator('#rules-status', { hasText: 'rolled back' }).waitFor();
    await page.locator('.rules-history-row.live', { hasText: 'rollback' }).waitFor();
    await liveMarker('v1', firstId);
    await send(checkout('ORD-R3'));
    expect((await receivedOnce('ORD-R3')).data.console_marker).to.equal('v1');
    expect(v1).to.be.lessThan(v2);
    expect(readFileSync(RULES_FILE, 'utf8'), 'plugins/webhook/rules.json is untouched').to.equal(rulesFileBefore);

    // For the screenshot: the history, and a next draft diffed and previewed side by side.
    await page.fill('#rules-editor', withMarker(await page.inputValue('#rules-editor'), 'v3'));
    await page.click('#rules-diff');
    await page.locator('#rules-diff-out .rules-change').waitFor();
    await page.fill('#rules-preview-event', firstId);
    await page.click('#rules-preview');
    await page.locator('#rules-preview-out .rules-preview-dest').waitFor();
    expect(await page.locator('#rules-diff-out .rules-change').count(), 'the diff stays while previewing').to.equal(1);
    await page.locator('#rules-diff-out').evaluate((el) => el.scrollIntoView());
    await shot('rules');
  });

  it('custom endpoints: a test run for the bound account answers without storing anything', async () => {
    await nav('custom');
    const row = page.locator('.custom-row[data-customer="demo"][data-endpoint="order-sync"]');
    await row.waitFor();
    expect(await row.locator('.custom-account option').allTextContents()).to.deep.equal([shop.scriptId]);
    expect(await text(row)).to.contain('api_key');
    await row.locator('.custom-send').click();
    const out = row.locator('.custom-out');
    await waitFor(async () => (await text(out)).startsWith('{'), WAIT);
    const answer = JSON.parse(await text(out));
    expect(answer, JSON.stringify(answer)).to.include({ result: 'ok' });
    expect(answer.messages).to.include('test mode: nothing was stored or delivered');
    await shot('custom');
  });

  it('at a phone\'s width (390 px) every view fits the screen, its navigation is on screen and ids read as text', async () => {
    await page.setViewportSize(PHONE);
    const problems: string[] = [];
    /** Records a view's problems and screenshots it at the top (phone-<name>.png) and whole (-full). */
    const check = async (name: string, idLabel?: string) => {
      problems.push(...await layoutProblems(page, name, idLabel));
      await shot(`phone-${name}`);
      await page.screenshot({ path: `${SHOTS}phone-${name}-full.png`, fullPage: true });
    };
    /** `selector` comes to start in the top half of the window (it is scrolled once its content is in). */
    const inView = async (selector: string, what: string) => {
      const top = () => page.locator(selector).evaluate((el) => el.getBoundingClientRect().top);
      await waitFor(async () => { const t = await top(); return t >= -1 && t <= PHONE.height / 2; }, WAIT);
      // Scrolled into view lands on a sub-pixel position (-0.3 px seen): a pixel of slack.
      expect(await top(), what).to.be.within(-1, PHONE.height / 2);
    };
    try {
      await nav('live');
      const close = page.locator('#live-detail .detail-head button.quiet');
      if (await close.isVisible()) await close.click();
      await page.locator('.live-row[data-event-id="ORD-C1"]').waitFor();
      await check('live');

      await page.locator('.live-row[data-event-id="ORD-C1"]').click();
      await page.locator('#live-detail .live-payload').waitFor();
      await inView('#live-detail', 'the event detail, under the list, is scrolled up');
      await check('event-detail', 'tracklane id');

      await nav('trace');
      await page.locator('.trace-delivery .trace-attempt').first().waitFor();
      await check('trace', 'tracklane id');

      await nav('destinations');
      await page.locator(`.dest-row[data-destination-id="${destId}"]`).waitFor();
      await check('destinations');

      await nav('rules');
      await page.locator('#rules-diff-out .rules-change').waitFor();
      await check('rules');
      await page.click('.rules-item[data-scope="default"][data-destination="webhook"]');
      await page.locator('#rules-current', { hasText: 'webhook · scope default' }).waitFor();
      await inView('#rules-current', 'the chosen file, under the list and history, is scrolled up');

      await nav('custom');
      const endpoint = page.locator('.custom-row[data-customer="demo"][data-endpoint="order-sync"]');
      await endpoint.locator('.custom-send').click();
      await waitFor(async () => (await text(endpoint.locator('.custom-out'))).startsWith('{'), WAIT);
      await check('custom');
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
    expect(problems).to.deep.equal([]);
  });

  it('markup in a payload is shown as text and never runs', async () => {
    await nav('live');
    const evil = checkout('ORD-XSS');
    (evil.products as { name: string }[])[0].name = XSS;
    await send(evil);
    const row = page.locator('.live-row[data-event-id="ORD-XSS"]');
    await row.waitFor();
    await row.click();
    const payload = page.locator('#live-detail .live-payload');
    await payload.waitFor();
    expect(JSON.parse(await text(payload)).products[0].name).to.equal(XSS);
    expect(await page.locator('#live-detail img, #live-detail script').count()).to.equal(0);

    await receivedOnce('ORD-XSS');
    await page.click('#live-detail .live-trace');
    await page.locator('.trace-delivery .trace-request').waitFor();
    expect(JSON.parse(await text(page.locator('.trace-payload'))).products[0].name).to.equal(XSS);
    expect(await text(page.locator('.trace-request'))).to.contain(JSON.stringify(XSS).slice(1, -1));
    // Evaluated as page source (the test's TypeScript has no DOM types).
    expect(await page.evaluate(`({
      xss: typeof window.__xss,
      imgs: document.querySelectorAll('img').length,
      scripts: Array.from(document.scripts).map((sc) => sc.getAttribute('src')),
    })`)).to.deep.equal({ xss: 'undefined', imgs: 0, scripts: ['/console/console.js'] });
  });

  it('a 401 from any call clears the token and brings back the form', async () => {
    await page.evaluate("sessionStorage.setItem('tracklane.adminToken', 'a-token-that-was-rotated-away')");
    await nav('destinations');
    await page.locator('#token-form').waitFor();
    expect(await text(page.locator('#token-message'))).to.contain('401');
    expect(await page.evaluate("sessionStorage.getItem('tracklane.adminToken')")).to.equal(null);
    await page.fill('#token-input', ADMIN_TOKEN);
    await page.click('#token-submit');
    await page.locator('#live-state[data-state="open"]').waitFor();
  });

  it('no CSP violation and no uncaught error in the page', () => {
    expect(pageProblems).to.deep.equal([]);
  });
});

/** The editor's document with data.console_marker set to `marker` in its first rule. */
function withMarker(editor: string, marker: string): string {
  const doc = JSON.parse(editor);
  doc.rules[0].output['data.console_marker'] = marker;
  return JSON.stringify(doc, null, 2);
}
