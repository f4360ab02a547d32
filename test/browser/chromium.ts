// Debian's Chromium driven through playwright-core (which never downloads a browser).
// When /usr/bin/chromium is missing the calling suite is skipped with a loud banner, unless
// TRACKLANE_REQUIRE_BROWSER=1 (CI with the browser installed), where that is a failure.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Chromium {
  context: BrowserContext;
  /** A new page (tab) of the 1280×800 context. */
  page(): Promise<Page>;
  close(): Promise<void>;
}

/** Why the browser cannot run here, or null when it can. */
export function chromiumMissing(): string | null {
  return existsSync(CHROMIUM_PATH) ? null : `${CHROMIUM_PATH} is not installed (apt-get install chromium)`;
}

/**
 * Call from a suite's before hook (`function` syntax, so `this` is mocha's context).
 * Returns a running Chromium with a fresh temporary profile, or skips the suite.
 */
export async function launchChromium(ctx: Mocha.Context, suite: string): Promise<Chromium> {
  const missing = chromiumMissing();
  if (missing !== null) {
    if (process.env.TRACKLANE_REQUIRE_BROWSER === '1') {
      throw new Error(`browser tests required (TRACKLANE_REQUIRE_BROWSER=1) but ${missing}`);
    }
    const line = '!'.repeat(78);
    console.warn(`\n${line}\n!! BROWSER TESTS SKIPPED: ${suite}\n!! because ${missing}.\n!! Set TRACKLANE_REQUIRE_BROWSER=1 to make this a failure.\n${line}\n`);
    ctx.skip();
  }
  // Playwright takes the profile directory as launchPersistentContext's argument (it refuses
  // --user-data-dir in args); a fresh one per launch, removed on close.
  const profile = mkdtempSync(join(tmpdir(), 'tl-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      args: CHROMIUM_ARGS,
      headless: true,
      viewport: { width: 1280, height: 800 },
      timeout: 60_000,
    });
  } catch (err) {
    rmSync(profile, { recursive: true, force: true });
    throw err;
  }
  return {
    context,
    page: () => context.newPage(),
    async close() {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
