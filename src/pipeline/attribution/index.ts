// Attribution ids from cookies and landing URLs (pure; no I/O).
export { extractAttribution, type AttributionInput, type AttributionIds, type AttributionResult } from './extract-attribution.ts';
export { parseGaClientId, parseGaSessionId } from './ga-cookies.ts';
export { parseFbp, parseFbc, buildFbc } from './meta-cookies.ts';
export { parseGclAw, parseTtp, queryParams, cleanClickId } from './click-ids.ts';
export { deriveClientId } from './derived-client-id.ts';
export { cookieJar, type CookieInput, type CookieJar } from './cookie-jar.ts';
