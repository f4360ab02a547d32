// The optional settings every destination accepts (docs/api.md, "Destinations"; the loader
// requires them): one type and one schema fragment, so the plugins cannot drift apart on
// them, and how the `endpoint` override becomes a base URL.

export interface CommonSettings {
  /** Base URL replacing the platform's own (sandboxes, test doubles). */
  endpoint?: string;
  /** The platform's test-event code, where it has one. */
  test_event_code?: string;
  /** Allow-list of tracklane event names; unset: no allow-list. */
  events?: string[];
  /** Consent flag that gates this destination instead of its category's default. */
  consent_category?: 'analytics' | 'marketing';
}

/**
 * Spread into a plugin's `settingsSchema.properties` where the common keys stand; a plugin
 * may override one after the spread (the key keeps its place, so error order is unchanged).
 *
 * @example
 * properties: { pixel_id: { type: 'string' }, ...COMMON_SETTINGS_PROPERTIES, lead_event_source: { type: 'string' } }
 */
export const COMMON_SETTINGS_PROPERTIES = {
  endpoint: { type: 'string', format: 'uri', pattern: '^https?://' },
  test_event_code: { type: 'string', minLength: 1 },
  events: { type: 'array', items: { type: 'string', minLength: 1 }, uniqueItems: true },
  consent_category: { type: 'string', enum: ['analytics', 'marketing'] },
} as const;

/**
 * `endpoint` when set, else the platform default, without trailing slashes, ready for a path.
 *
 * @example baseUrl('http://127.0.0.1:9000//', 'https://graph.facebook.com') // → 'http://127.0.0.1:9000'
 */
export function baseUrl(endpoint: string | undefined, platformDefault: string): string {
  return (endpoint ?? platformDefault).replace(/\/+$/, '');
}
