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
  /** Requests in flight to this destination at most (1–64); unset: the server's (8). */
  max_concurrency?: number;
  /** Longest a request to it may take, ms (1,000–30,000); unset: the server's (15,000). */
  timeout_ms?: number;
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
  max_concurrency: { type: 'integer', minimum: 1, maximum: 64 },
  timeout_ms: { type: 'integer', minimum: 1_000, maximum: 30_000 },
} as const;

/**
 * `endpoint` when set, else the platform default, without trailing slashes, ready for a path.
 *
 * @example baseUrl('http://127.0.0.1:9000//', 'https://graph.facebook.com') // → 'http://127.0.0.1:9000'
 */
export function baseUrl(endpoint: string | undefined, platformDefault: string): string {
  return (endpoint ?? platformDefault).replace(/\/+$/, '');
}

// ---- the settings type, derived from the schema ----------------------------------------
// A plugin writes its settings schema once (`as const`) and takes its type from it:
// `export type PinterestSettings = SettingsOf<typeof settingsSchema>`. Covers what settings
// schemas use: string, number/integer, boolean, enum, anyOf, arrays, objects with
// properties/required or additionalProperties. Keys in `required` are required, the rest optional.

type Required<S> = S extends { required: readonly (infer R)[] } ? R : never;

/** The TypeScript type one property schema describes. */
export type ValueOf<P> =
  P extends { enum: readonly (infer E)[] } ? E
  : P extends { anyOf: readonly (infer A)[] } ? ValueOf<A>
  : P extends { type: 'string' } ? string
  : P extends { type: 'integer' | 'number' } ? number
  : P extends { type: 'boolean' } ? boolean
  : P extends { type: 'array'; items: infer I } ? ValueOf<I>[]
  : P extends { type: 'object'; properties: object } ? SettingsOf<P>
  : P extends { type: 'object'; additionalProperties: infer A } ? Record<string, ValueOf<A>>
  : unknown;

/** The object type of a schema with `properties` (and `required`). */
export type SettingsOf<S> = S extends { properties: infer P }
  ? { -readonly [K in keyof P as K extends Required<S> ? K : never]: ValueOf<P[K]> }
    & { -readonly [K in keyof P as K extends Required<S> ? never : K]?: ValueOf<P[K]> }
  : never;
