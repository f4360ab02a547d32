// Attribution ids from cookies and landing URLs, as each destination's spec declares (pure; no I/O).
export {
  extractAttribution, readAttribution, refineAttribution, readsParams,
  type AttributionInput, type AttributionReading, type AttributionResult, type TaggedAttributionWarning,
} from './extract-attribution.ts';
export type { AttributionIds, AttributionSource, AttributionSpec, AttributionValue, AttributionWarning, NamedAttributionSpec, RefineContext } from './spec.ts';
export { queryParams, cleanClickId } from './click-ids.ts';
export { cookieJar, type CookieInput, type CookieJar } from '../schema/cookie-jar.ts';
