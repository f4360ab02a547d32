// Meta browser ids: `_fbp` and `_fbc` are sent as they are, never
// hashed; without `_fbc`, one is built from a `fbclid` landing parameter.
import type { AttributionSpec } from 'tracklane/sdk';

/**
 * Returns the `_fbp` value when it has the `fb.<subdomainIndex>.<creation ms>.<random>` shape.
 * @example parseFbp('fb.1.1700000000000.1234567890') // 'fb.1.1700000000000.1234567890'
 */
export function parseFbp(value: string): string | undefined {
  const v = value.trim();
  return /^fb\.\d+\.\d+\.[^.\s]+$/.test(v) ? v : undefined;
}

/**
 * Returns the `_fbc` value when it has the `fb.<subdomainIndex>.<creation ms>.<fbclid>` shape.
 * The fbclid may carry a further dotted suffix (Meta's parameter builder appends one).
 * @example parseFbc('fb.1.1700000000000.IwAR2abc') // 'fb.1.1700000000000.IwAR2abc'
 */
export function parseFbc(value: string): string | undefined {
  const v = value.trim();
  return /^fb\.\d+\.\d+\.\S+$/.test(v) ? v : undefined;
}

/**
 * Builds fbc from a click id: subdomain index 1 and the first-seen time in ms.
 * `fbclid` is case-sensitive and kept exactly.
 * @example buildFbc('IwAR2abc', 1700000000000) // 'fb.1.1700000000000.IwAR2abc'
 */
export function buildFbc(fbclid: string, firstSeenMs: number): string {
  return `fb.1.${Math.trunc(firstSeenMs)}.${fbclid}`;
}

/** What Meta reads: `_fbp`, and `_fbc` or, without it, one built from a `fbclid` landing parameter. */
export const META_ATTRIBUTION: AttributionSpec = {
  ids: {
    fbp: [{ cookie: '_fbp', parse: parseFbp }],
    fbc: [{ cookie: '_fbc', parse: parseFbc }, { param: 'fbclid', build: buildFbc }],
  },
};
