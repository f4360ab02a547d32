// A console page signed in with an admin token, for the browser tests that each start their
// own server: CSP violations and page errors collected (there must be none), live stream open;
// and the usual start, a shop with a webhook destination on a loopback double (openWebhookShop).
import type { Page } from 'playwright-core';
import { randomBytes } from 'node:crypto';
import { launchChromium, type Chromium } from './chromium.ts';
import { startTestServer, type TestAccount, type TestServer, type TestServerOptions } from '../helpers/test-server.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { SETTINGS } from '../delivery/delivery-fixture.ts';

export interface ConsoleSession {
  page: Page;
  /** CSP violations and uncaught page errors seen so far. */
  problems: string[];
}

export async function openConsole(chromium: Chromium, baseUrl: string, token: string, timeoutMs: number): Promise<ConsoleSession> {
  const page = await chromium.page();
  const problems: string[] = [];
  page.setDefaultTimeout(timeoutMs);
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  // Network idle: the modules are loaded, so the token form is theirs (not a plain form submit).
  await page.goto(`${baseUrl}/console`, { waitUntil: 'networkidle' });
  await page.fill('#token-input', token);
  await page.click('#token-submit');
  await page.locator('#live-state[data-state="open"]').waitFor();
  return { page, problems };
}

/** A server with one account and a webhook destination on a loopback double, and a console signed in to it. */
export interface WebhookShop extends ConsoleSession {
  chromium: Chromium;
  s: TestServer;
  hook: DestinationDouble;
  shop: TestAccount;
  /** Closes the browser, the server and the double. */
  close(): Promise<void>;
}

/**
 * What most console tests start from (skipped, loudly, without /usr/bin/chromium).
 * @example before(async function () { w = await openWebhookShop(this, { suite: 'test/browser/x.test.ts', token, name: 'X shop', timeoutMs: 15_000 }); });
 */
export async function openWebhookShop(ctx: Mocha.Context, opts: {
  suite: string; token: string; name: string; timeoutMs: number; env?: Record<string, string>; server?: TestServerOptions;
}): Promise<WebhookShop> {
  const chromium = await launchChromium(ctx, opts.suite);
  const hook = await startDestinationDouble();
  const s = await startTestServer(opts.env ?? { ADMIN_TOKEN: opts.token, ALLOW_PRIVATE_DESTINATIONS: '1' }, opts.server);
  const shop = await s.account({ name: opts.name });
  await s.running.store.destinations.add({
    id: `dst_${randomBytes(8).toString('hex')}`, scriptId: shop.scriptId, type: 'webhook', name: 'hook', enabled: true, settings: SETTINGS.webhook(hook.url),
  });
  const session = await openConsole(chromium, s.url, opts.token, opts.timeoutMs);
  return {
    ...session, chromium, s, hook, shop,
    async close() {
      await chromium.close();
      await s.close();
      await hook.close();
    },
  };
}
