// Pipeline findings as sentences a marketer acts on, prefixed with the destination type
// and limited to what that destination uses (a malformed _fbp means nothing to GA4): an
// attribution warning concerns the destination whose spec read the cookie, URL warnings
// every destination that reads click ids from URLs. They name fields, never values:
// warnings reach logs and previews.
import type { DestinationPlugin } from '../destinations/types.ts';
import { readsParams, type AttributionIds, type TaggedAttributionWarning } from '../attribution/index.ts';
import type { PipelineWarning } from '../identifiers/index.ts';

function attributionSentence(w: TaggedAttributionWarning): string {
  if (w.sentence !== undefined) return w.sentence;
  switch (w.code) {
    case 'COOKIE_MALFORMED':
      return `cookie ${w.field.replace(/^cookies\./, '')} does not have the expected format; ignored`;
    case 'URL_UNPARSEABLE':
      return `${w.field} is not an absolute URL; no click ids read from it`;
    default:
      return w.message;
  }
}

/** The attribution warnings that matter to this destination, as sentences. */
export function attributionWarnings(
  type: string,
  plugin: Pick<DestinationPlugin, 'name' | 'attribution'>,
  warnings: readonly TaggedAttributionWarning[],
): string[] {
  const urls = readsParams(plugin.attribution);
  const mine = warnings.filter((w) => (w.destination === undefined ? urls : w.destination === plugin.name));
  return unique(mine.map((w) => `${type}: ${attributionSentence(w)}`));
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
 * For a destination that declares `matchKeys`: a warning when the event carries none of the
 * keys it matches people by (a hashed e-mail or phone, or one of those attribution ids), else null.
 */
export function matchKeyWarning(
  type: string,
  plugin: Pick<DestinationPlugin, 'identifiers' | 'matchKeys'>,
  identifiers: Readonly<Record<string, unknown>>,
  attribution: AttributionIds,
): string | null {
  const keys = plugin.matchKeys;
  if (keys === undefined) return null;
  const contactKeys = Object.entries(plugin.identifiers?.table ?? {})
    .filter(([, rule]) => [rule.from].flat().some((f) => f === 'email' || f === 'phone'))
    .map(([k]) => k);
  if (contactKeys.some((k) => identifiers[k] !== undefined)) return null;
  if (keys.some((k) => attribution[k])) return null;
  const names = ['email', 'phone', ...keys];
  return `${type}: no match keys — ${names.slice(0, -1).join(', ')} and ${names[names.length - 1]} all missing`;
}

function unique(list: string[]): string[] {
  return [...new Set(list)];
}
