// What TikTok reads: the `ttclid` click id from the landing URL and the `_ttp` browser id cookie.
import type { AttributionSpec } from 'tracklane/sdk';

/**
 * `_ttp` → the TikTok `ttp` value, when it looks like an id (no spaces or separators).
 * @example parseTtp('2Ab3cD4eF5gH6iJ7kL8mN9oP0qR') // '2Ab3cD4eF5gH6iJ7kL8mN9oP0qR'
 */
export function parseTtp(value: string): string | undefined {
  const v = value.trim();
  return /^[\w.-]{8,128}$/.test(v) ? v : undefined;
}

export const TIKTOK_ATTRIBUTION: AttributionSpec = {
  ids: {
    ttclid: [{ param: 'ttclid' }],
    ttp: [{ cookie: '_ttp', parse: parseTtp }],
  },
};
