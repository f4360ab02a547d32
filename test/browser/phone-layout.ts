// What "usable at a phone's width" means for the console, measured in the page: nothing makes
// the page scroll sideways or sticks out past the screen's edge (wide tables and code scroll
// inside their own box), every navigation link is on screen, and an id reads as a line of text.
import type { Page } from 'playwright-core';

/** An iPhone 12-15 sized viewport, in CSS pixels. */
export const PHONE = { width: 390, height: 844 } as const;

/**
 * The layout problems of the page as it is now, one line each (none: an empty list).
 * `idLabel`: the `dt` with this text is followed by a `dd` holding an id, which must take at
 * most two lines (an id broken one character per line takes as many lines as it has characters).
 * Evaluated as page source (the test's TypeScript has no DOM types).
 */
export async function layoutProblems(page: Page, view: string, idLabel?: string): Promise<string[]> {
  const found: string[] = await page.evaluate(`(() => {
    const problems = [];
    const vw = window.innerWidth;
    const doc = document.documentElement;
    if (doc.scrollWidth > vw) problems.push('the page is ' + doc.scrollWidth + ' px wide in a ' + vw + ' px window');
    for (const a of document.querySelectorAll('#nav [data-view], #sign-out')) {
      const r = a.getBoundingClientRect();
      if (r.left < 0 || r.right > vw || r.width === 0) problems.push('navigation "' + a.textContent + '" at ' + Math.round(r.left) + '..' + Math.round(r.right) + ' px');
    }
    // Something past the right edge is fine only inside a box that scrolls (or clips) it;
    // html and body do not count, or overflow-x: hidden on them would hide the page's width.
    const clipped = (el) => {
      for (let p = el.parentElement; p && p !== document.body && p !== doc; p = p.parentElement) {
        if (getComputedStyle(p).overflowX !== 'visible') return true;
      }
      return false;
    };
    const shown = document.querySelectorAll('header *, main > .view:not([hidden]) *');
    let sticking = 0;
    for (const el of shown) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.right <= vw + 0.5 || clipped(el)) continue;
      if (sticking++ < 5) problems.push('<' + el.tagName.toLowerCase() + ' class="' + el.className + '"> ends at ' + Math.round(r.right) + ' px');
    }
    if (sticking > 5) problems.push('... and ' + (sticking - 5) + ' more elements past the edge');
    const label = ${JSON.stringify(idLabel ?? null)};
    if (label !== null) {
      const dt = Array.from(document.querySelectorAll('main > .view:not([hidden]) dt')).find((d) => d.textContent === label && d.getClientRects().length > 0);
      const dd = dt && dt.nextElementSibling;
      if (!dd) problems.push('no "' + label + '" shown');
      else {
        const lineHeight = parseFloat(getComputedStyle(dd).lineHeight);
        const lines = Math.round(dd.getBoundingClientRect().height / lineHeight);
        if (lines > 2) problems.push('the ' + label + ' (' + dd.textContent.length + ' characters) takes ' + lines + ' lines, ' + Math.round(dd.getBoundingClientRect().width) + ' px wide');
      }
    }
    return problems;
  })()`);
  return found.map((p) => `${view}: ${p}`);
}

/**
 * Each element matching one of `selectors` that is not wholly on screen (left ≥ 0, right ≤ the
 * window's width) — a value in a box that scrolls sideways counts as off screen, since the
 * operator does not see it — one line each; a selector matching nothing is a problem too.
 */
export async function offScreen(page: Page, view: string, selectors: readonly string[]): Promise<string[]> {
  const found: string[] = await page.evaluate(`(() => {
    const problems = [];
    const vw = window.innerWidth;
    for (const sel of ${JSON.stringify(selectors)}) {
      const els = Array.from(document.querySelectorAll(sel)).filter((el) => el.getClientRects().length > 0);
      if (els.length === 0) problems.push(sel + ': none shown');
      for (const el of els) {
        const r = el.getBoundingClientRect();
        if (r.left < 0 || r.right > vw + 0.5) problems.push(sel + ' "' + el.textContent.trim().slice(0, 30) + '" at ' + Math.round(r.left) + '..' + Math.round(r.right) + ' px');
      }
    }
    return problems;
  })()`);
  return found.map((p) => `${view}: ${p}`);
}
