// Pipeline findings as sentences a marketer acts on, prefixed with the destination type
// and limited to what that destination uses (a malformed _fbp means nothing to GA4).
// They name fields, never values: warnings reach logs and previews.
import type { DestinationPlugin } from '../destinations/types.ts';
import type { AttributionIds } from './attribution/index.ts';
import { IDENTIFIER_TABLES, type IdentifierTable, type PipelineWarning } from './identifiers/index.ts';

/** What a destination reads from cookies and URLs, judged from its category and platform. */
type AttributionUse = 'ga' | 'google-ads' | 'meta' | 'tiktok';

function attributionUse(plugin: Pick<DestinationPlugin, 'category' | 'identifiers'>): AttributionUse | null {
  switch (plugin.identifiers?.platform) {
    case 'google':
      return plugin.category === 'analytics' ? 'ga' : 'google-ads';
    case 'meta':
      return 'meta';
    case 'tiktok':
      return 'tiktok';
    default:
      return null;
  }
}

const COOKIE_USE: readonly [RegExp, AttributionUse][] = [
  [/^cookies\._ga(_.*)?$/, 'ga'],
  [/^cookies\._gcl_aw$/, 'google-ads'],
  [/^cookies\._fb[pc]$/, 'meta'],
  [/^cookies\._ttp$/, 'tiktok'],
];

function relevant(w: PipelineWarning, use: AttributionUse): boolean {
  switch (w.code) {
    case 'CLIENT_ID_DERIVED':
    case 'CLIENT_ID_MISSING':
      return use === 'ga';
    case 'CLICK_ID_CONFLICT':
      return use === 'google-ads';
    case 'URL_UNPARSEABLE':
      return use !== 'ga';
    case 'COOKIE_MALFORMED':
      return COOKIE_USE.some(([re, u]) => u === use && re.test(w.field));
    default:
      return true;
  }
}

function attributionSentence(w: PipelineWarning): string {
  switch (w.code) {
    case 'CLIENT_ID_DERIVED':
      return 'no _ga cookie, client_id derived from the user';
    case 'CLIENT_ID_MISSING':
      return 'no _ga cookie and no user id, email or phone: no client_id to send';
    case 'COOKIE_MALFORMED':
      return `cookie ${w.field.replace(/^cookies\./, '')} does not have the expected format; ignored`;
    case 'URL_UNPARSEABLE':
      return `${w.field} is not an absolute URL; no click ids read from it`;
    case 'CLICK_ID_CONFLICT':
      return 'both gbraid and wbraid in the URL; only wbraid sent';
    default:
      return w.message;
  }
}

/** The attribution warnings that matter to this destination, as sentences. */
export function attributionWarnings(
  type: string,
  plugin: Pick<DestinationPlugin, 'category' | 'identifiers'>,
  warnings: readonly PipelineWarning[],
): string[] {
  const use = attributionUse(plugin);
  if (use === null) return [];
  return unique(warnings.filter((w) => relevant(w, use)).map((w) => `${type}: ${attributionSentence(w)}`));
}

const FIELD_NAMES: Record<string, string> = {
  'user.email': 'a valid email address',
  'user.phone': 'a valid phone number (use international format or set the account country)',
  'user.postal_code': 'a valid postal code',
  'user.country': 'a known country',
  'user.region': 'a known region',
};

/** Identifier warnings as sentences: which user field was left out and why. */
export function identifierWarnings(type: string, warnings: readonly PipelineWarning[]): string[] {
  return unique(warnings.map((w) => {
    if (w.code === 'IDENTIFIER_HASHED_NOT_SENDABLE') return `${type}: ${w.field} arrived hashed but ${type} needs it in plain text; not sent`;
    if (w.code === 'IDENTIFIER_INVALID') return `${type}: ${w.field} is not ${FIELD_NAMES[w.field] ?? 'usable'}; not sent`;
    return `${type}: ${w.message}`;
  }));
}

/**
 * For Meta and TikTok: a warning when the event carries none of the keys the platform
 * matches people by (hashed email or phone, or its browser/click ids), else null.
 */
export function matchKeyWarning(
  type: string,
  plugin: Pick<DestinationPlugin, 'identifiers' | 'category'>,
  identifiers: Readonly<Record<string, unknown>>,
  attribution: AttributionIds,
): string | null {
  if (plugin.category === 'webhook') return null; // a receiver of its own matches on what it likes
  const platform = plugin.identifiers?.platform;
  if (platform !== 'meta' && platform !== 'tiktok') return null;
  const table: IdentifierTable = plugin.identifiers?.table ?? IDENTIFIER_TABLES[platform];
  const contactKeys = Object.entries(table)
    .filter(([, rule]) => [rule.from].flat().some((f) => f === 'email' || f === 'phone'))
    .map(([k]) => k);
  if (contactKeys.some((k) => identifiers[k] !== undefined)) return null;
  if (platform === 'meta') {
    return attribution.fbp || attribution.fbc ? null : `${type}: no match keys — email, phone, fbp and fbc all missing`;
  }
  return attribution.ttp || attribution.ttclid ? null : `${type}: no match keys — email, phone, ttp and ttclid all missing`;
}

function unique(list: string[]): string[] {
  return [...new Set(list)];
}
