// A console page signed in with an admin token, for the browser tests that each start their
// own server: CSP violations and page errors collected (there must be none), live stream open.
import type { Page } from 'playwright-core';
import type { Chromium } from './chromium.ts';

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
