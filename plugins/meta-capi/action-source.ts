// context.data_source → Meta `action_source`.
import type { EventContext } from 'tracklane/sdk';

/** Meta's own values pass through unchanged, so a customer may send them directly. */
const META_VALUES = new Set([
  'website', 'app', 'email', 'phone_call', 'chat', 'physical_store', 'system_generated', 'business_messaging', 'other',
]);

/** The documented data_source words that are not already Meta values. */
const FROM_DATA_SOURCE: Readonly<Record<string, string>> = {
  phone: 'phone_call',
  crm: 'system_generated',
  admin: 'other',
  marketplace: 'other',
};

/**
 * `website` for data_source `website`, and for a missing data_source when the event has a
 * page URL; `other` for a missing data_source without one and for any unknown word.
 *
 * @example actionSource({ environment: 'prod', data_source: 'phone' }) // → 'phone_call'
 */
export function actionSource(context: EventContext): string {
  const source = typeof context.data_source === 'string' ? context.data_source.trim().toLowerCase() : '';
  if (source === '') return hasText(context.url) ? 'website' : 'other';
  if (META_VALUES.has(source)) return source;
  return FROM_DATA_SOURCE[source] ?? 'other';
}

function hasText(v: unknown): boolean {
  return typeof v === 'string' && v.trim() !== '';
}
