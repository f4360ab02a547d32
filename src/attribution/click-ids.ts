// Click ids from landing-page query strings: parsing a URL's parameters and keeping a
// click id exactly as it came (they are case-sensitive).

/** Query parameters of an absolute URL, or null when it does not parse. */
export function queryParams(url: string): URLSearchParams | null {
  try {
    return new URL(url).searchParams;
  } catch {
    return null;
  }
}

/** A click id, kept exactly: non-empty, at most 1024 characters, no spaces or control characters. */
export function cleanClickId(value: string | null | undefined): string | undefined {
  const v = value?.trim();
  return v && v.length <= 1024 && /^[^\s\p{C}]+$/u.test(v) ? v : undefined;
}
