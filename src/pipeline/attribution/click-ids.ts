// Click ids from landing-page query strings and the cookies that remember them.

/** Query parameters of an absolute URL, or null when it does not parse. */
export function queryParams(url: string): URLSearchParams | null {
  try {
    return new URL(url).searchParams;
  } catch {
    return null;
  }
}

/** A click id, kept exactly (they are case-sensitive): non-empty, no spaces or control characters. */
export function cleanClickId(value: string | null | undefined): string | undefined {
  const v = value?.trim();
  return v && v.length <= 1024 && /^[^\s\p{C}]+$/u.test(v) ? v : undefined;
}

/**
 * `_gcl_aw` (`GCL.<unix s>.<gclid>`) → gclid. Google does not document the format; best-effort.
 * @example parseGclAw('GCL.1700000000.Cj0KCQiA') // 'Cj0KCQiA'
 */
export function parseGclAw(value: string): string | undefined {
  const m = /^GCL\.\d+\.(.+)$/.exec(value.trim());
  return m ? cleanClickId(m[1]) : undefined;
}

/**
 * `_ttp` → the TikTok `ttp` value, when it looks like an id (no spaces or separators).
 * @example parseTtp('2Ab3cD4eF5gH6iJ7kL8mN9oP0qR') // '2Ab3cD4eF5gH6iJ7kL8mN9oP0qR'
 */
export function parseTtp(value: string): string | undefined {
  const v = value.trim();
  return /^[\w.-]{8,128}$/.test(v) ? v : undefined;
}
