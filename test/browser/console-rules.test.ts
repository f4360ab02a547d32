// The rules editor in Chromium: line numbers beside the text (kept in step when it scrolls,
// the line of a JSON syntax error flagged), the diff marking only the lines that changed, its
// two panes opening at the first change and scrolling together (at a phone's width), the
// stored-event preview found by order id as Trace finds it, the history saying what serves
// when no version does, and "Revert to file" after a publish making the plugin default live
// again, confirmed. Skipped (loudly) when /usr/bin/chromium is missing.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Locator, Page } from 'playwright-core';
import { startTestServer, tempDir, waitFor, type TestAccount, type TestServer } from '../helpers/test-server.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { checkout, SETTINGS } from '../delivery/delivery-fixture.ts';
import { launchChromium, type Chromium } from './chromium.ts';
import { openConsole } from './console-session.ts';
import { PHONE } from './phone-layout.ts';

const ADMIN_TOKEN = `console-rules-${randomBytes(12).toString('hex')}`;
const WAIT = 15_000;
const PLUGIN_RULES = JSON.parse(readFileSync(fileURLToPath(new URL('../../plugins/webhook/rules.json', import.meta.url)), 'utf8'));

function withMarker(doc: unknown, marker: string): string {
  const d = structuredClone(doc) as { rules: { output: Record<string, unknown> }[] };
  d.rules[0].output['data.console_marker'] = marker;
  return JSON.stringify(d, null, 2);
}

describe('console in a browser: rules editor line numbers, marked diff, revert to file', function () {
  this.timeout(120_000);
  let chromium: Chromium;
  let s: TestServer;
  let hook: DestinationDouble;
  let shop: TestAccount;
  let page: Page;
  let pageProblems: string[] = [];
  const text = (l: Locator) => l.textContent().then((t) => t ?? '');

  before(async function () {
    chromium = await launchChromium(this, 'test/browser/console-rules.test.ts');
    hook = await startDestinationDouble();
    // An empty RULES_DIR: the webhook's rules are its plugin default until something is published.
    s = await startTestServer({ ADMIN_TOKEN, ALLOW_PRIVATE_DESTINATIONS: '1', RULES_DIR: tempDir('tl-console-rules-') });
    shop = await s.account({ name: 'Rules shop' });
    await s.running.store.destinations.add({
      id: `dst_${randomBytes(8).toString('hex')}`, scriptId: shop.scriptId, type: 'webhook', name: 'hook', enabled: true, settings: SETTINGS.webhook(hook.url),
    });
    ({ page, problems: pageProblems } = await openConsole(chromium, s.url, ADMIN_TOKEN, WAIT));
    await page.click('#nav [data-view="rules"]');
    await page.click('.rules-item[data-scope="default"][data-destination="webhook"]');
    await page.locator('#rules-current', { hasText: 'plugin default' }).waitFor();
  });

  after(async () => {
    await chromium?.close();
    await s?.close();
    await hook?.close();
  });

  /** What the webhook double received for an event sent now. */
  async function deliver(eventId: string): Promise<any> {
    const r = await s.post('/webhooks/service/event', checkout(eventId), { account: shop });
    expect(r.status, r.text).to.equal(200);
    await hook.waitFor(() => hook.requests.some((q) => q.json<{ id?: string }>().id === eventId), WAIT, `${eventId} delivered`);
    return hook.requests.find((q) => q.json<{ id?: string }>().id === eventId)!.json();
  }

  it('numbers the editor\'s lines, follows its scroll, and flags the line of a syntax error', async () => {
    const editorLines = (await page.inputValue('#rules-editor')).split('\n').length;
    expect(await page.locator('.editor-gutter .gutter-line').count()).to.equal(editorLines);

    // Taller than the editor: 120 blank lines after the first.
    const tall = withMarker(PLUGIN_RULES, 'x').split('\n').flatMap((l, i) => (i === 1 ? [l, ...Array.from({ length: 120 }, () => '')] : [l])).join('\n');
    await page.fill('#rules-editor', tall);
    expect(await page.locator('.editor-gutter .gutter-line').count()).to.equal(tall.split('\n').length);
    // (Page code as strings: this file is type-checked without the DOM library.)
    const scrolled = await page.evaluate(`(() => {
      const t = document.querySelector('#rules-editor');
      t.scrollTop = 600;
      t.dispatchEvent(new Event('scroll'));
      return t.scrollTop;
    })()`) as number;
    expect(scrolled).to.be.greaterThan(0);
    await page.waitForFunction("document.querySelector('.editor-gutter').scrollTop === document.querySelector('#rules-editor').scrollTop");
    // The gutter's lines are as high as the editor's, so line N sits level with line N.
    const top = await page.evaluate(`({
      gutterLine: document.querySelector('.editor-gutter .gutter-line').getBoundingClientRect().height,
      editorLine: parseFloat(getComputedStyle(document.querySelector('#rules-editor')).lineHeight),
    })`) as { gutterLine: number; editorLine: number };
    expect(top.gutterLine).to.equal(top.editorLine);

    await page.fill('#rules-editor', '{\n  "destination": "webhook",\n  "rules": [,]\n}');
    await page.click('#rules-check');
    expect(await text(page.locator('#rules-errors .rules-error'))).to.match(/line 3, column \d+/);
    expect(await page.locator('.editor-gutter .gutter-error').getAttribute('data-line')).to.equal('3');
    await page.locator('#rules-editor').press('End');
    await page.locator('#rules-editor').pressSequentially(' ');
    expect(await page.locator('.editor-gutter .gutter-error').count(), 'typing clears the flag').to.equal(0);
  });

  it('the diff marks the changed lines only', async () => {
    await page.fill('#rules-editor', withMarker(PLUGIN_RULES, 'v1'));
    await page.click('#rules-diff');
    const change = page.locator('#rules-diff-out .rules-change[data-rule-id="webhook.event"]');
    await change.waitFor();
    const added = await change.locator('.diff-after .line-added').allTextContents();
    expect(added.join('')).to.contain('"data.console_marker": "v1"');
    const afterLines = await change.locator('.diff-after .diff-line').count();
    expect(added.length).to.be.greaterThan(0).and.lessThan(afterLines);
    const unmarked = await change.locator('.diff-after .diff-line:not(.line-added)').allTextContents();
    expect(unmarked.join('')).to.contain('"id": "webhook.event"');
    expect((await change.locator('.diff-before .line-removed').allTextContents()).join('')).not.to.contain('console_marker');
  });

  it('with nothing published, the history says the plugin default is live (not a file)', async () => {
    const history = page.locator('#rules-history');
    await history.locator('td').first().waitFor();
    expect(await text(history)).to.equal('No published versions: the plugin default is live.');
  });

  it('the diff\'s two panes open at the first changed line, face each other line for line and scroll together (at 390 px)', async () => {
    await page.setViewportSize(PHONE);
    try {
      // The marker goes at the end of the rule's output: its first changed line is past the panes' first screenful.
      await page.fill('#rules-editor', withMarker(PLUGIN_RULES, 'v-scroll'));
      await page.click('#rules-diff');
      const change = page.locator('#rules-diff-out .rules-change[data-rule-id="webhook.event"]');
      await change.waitFor();
      const [before, after] = [change.locator('.diff-before pre'), change.locator('.diff-after pre')];
      expect(await before.locator('.diff-line').count(), 'as many lines each side').to.equal(await after.locator('.diff-line').count());
      /** A pane's scroll position and whether its first changed line is inside its box. */
      const pane = (l: Locator, mark: string) => l.evaluate((p, cls) => {
        const line = p.querySelector(`.${cls}`);
        const box = p.getBoundingClientRect();
        const at = line.getBoundingClientRect();
        return { top: p.scrollTop, scrolls: p.scrollHeight > p.clientHeight, changeShown: at.top >= box.top && at.bottom <= box.bottom };
      }, mark);
      for (const [l, mark] of [[before, 'line-removed'], [after, 'line-added']] as const) {
        const p = await pane(l, mark);
        expect(p, mark).to.deep.include({ scrolls: true, changeShown: true });
        expect(p.top, `${mark}: opened scrolled down to the change`).to.be.greaterThan(0);
      }

      const top = (l: Locator) => l.evaluate((p) => p.scrollTop);
      await before.hover();
      await page.mouse.wheel(0, -2000);
      await waitFor(async () => (await top(before)) === 0 && (await top(after)) === 0, WAIT);
      expect(await top(after), 'the after pane followed the before pane up').to.equal(0);
      await after.hover();
      await page.mouse.wheel(0, 90);
      await waitFor(async () => (await top(after)) > 0 && (await top(before)) === (await top(after)), WAIT);
      expect(await top(before), 'the before pane followed the after pane down').to.equal(await top(after)).and.greaterThan(0);
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('the Stored event preview takes an order id, as Trace does, and asks which event when it names several', async () => {
    await deliver('ORD-PV1');
    const [stored] = await s.running.store.events.list({ search: 'ORD-PV1', limit: 1 });
    await page.fill('#rules-editor', withMarker(PLUGIN_RULES, 'pv'));
    await page.fill('#rules-preview-event', 'ORD-PV1');
    await page.click('#rules-preview');
    const out = page.locator('#rules-preview-out');
    await out.locator('.rules-preview-dest[data-changed="true"]').waitFor();
    expect(await text(out.locator('.rules-preview-event'))).to.contain(stored.id).and.contain('ORD-PV1');
    expect(await page.locator('#rules-errors .rules-error').count()).to.equal(0);

    // The same order id in the dev environment: a second accepted event. The preview lists both to choose from.
    const prod = checkout('ORD-PV1');
    const dev = { ...prod, context: { ...(prod.context as Record<string, unknown>), environment: 'dev' } };
    const r = await s.post('/webhooks/service/event', dev, { account: shop });
    expect(r.status, r.text).to.equal(200);
    const [devEvent] = (await s.running.store.events.list({ search: 'ORD-PV1', limit: 5 })).filter((e) => e.id !== stored.id);
    expect(devEvent.status).to.equal('accepted');
    await page.click('#rules-preview');
    const picks = out.locator('.rules-preview-pick');
    await picks.first().waitFor();
    expect(await picks.count()).to.equal(2);
    expect(await out.locator('.rules-preview-dest').count(), 'nothing previewed until one is chosen').to.equal(0);
    await out.locator(`.rules-preview-pick[data-id="${devEvent.id}"]`).click();
    await out.locator('.rules-preview-event', { hasText: devEvent.id }).waitFor();
    expect(await page.inputValue('#rules-preview-event')).to.equal(devEvent.id);
  });

  it('after a publish, "Revert to file" (confirmed) makes the plugin default live again for the next event', async () => {
    expect(await page.locator('.rules-revert').count(), 'nothing published: nothing to revert').to.equal(0);
    await page.fill('#rules-editor', withMarker(PLUGIN_RULES, 'v1'));
    await page.fill('#rules-message', 'marker v1');
    await page.click('#rules-publish');
    await page.locator('#rules-status', { hasText: /published version \d+/ }).waitFor();
    expect((await deliver('ORD-RV1')).data.console_marker).to.equal('v1');

    let asked = '';
    page.once('dialog', (d) => { asked = d.message(); void d.dismiss(); });
    await page.click('.rules-revert');
    await page.waitForFunction(() => true);
    expect(asked).to.contain('Revert webhook (scope default)');
    expect(await text(page.locator('#rules-current'))).to.contain('store version');

    page.once('dialog', (d) => void d.accept());
    await page.click('.rules-revert');
    await page.locator('#rules-status', { hasText: 'reverted: the plugin default is live' }).waitFor();
    expect(await text(page.locator('#rules-current'))).to.contain('plugin default');
    expect(JSON.parse(await page.inputValue('#rules-editor'))).to.deep.equal(PLUGIN_RULES);
    await page.locator('.rules-history-row[data-action="revert"]').first().waitFor();
    expect(await page.locator('.rules-history-row.live').count()).to.equal(0);
    expect(await text(page.locator('#rules-history .rules-history-now'))).to.equal('No published version is live: the plugin default is.');
    await page.locator('.rules-item[data-destination="webhook"][data-scope="default"]', { hasText: 'plugin default' }).waitFor();
    expect((await deliver('ORD-RV2')).data).not.to.have.property('console_marker');
    expect(pageProblems).to.deep.equal([]);
  });
});
