// Collects the click and browser ids every destination needs from one event's cookies
// and URLs. Malformed input never throws: the id is left out and
// a warning says which cookie or URL was unusable.
import type { PipelineWarning } from '../identifiers/types.ts';
import { cleanClickId, parseGclAw, parseTtp, queryParams } from './click-ids.ts';
import { cookieJar, type CookieInput } from './cookie-jar.ts';
import { deriveClientId } from './derived-client-id.ts';
import { parseGaClientId, parseGaSessionId } from './ga-cookies.ts';
import { buildFbc, parseFbc, parseFbp } from './meta-cookies.ts';

export interface AttributionInput {
  /** The payload's `cookies` array (`[{name, value}]`) or a name → value map. */
  cookies?: CookieInput;
  /** `context.url`, searched first for click ids. */
  url?: string;
  /** `context.landing_url`, searched after `url`. */
  landingUrl?: string;
  /** Used only to derive a client_id when there is no usable `_ga`. */
  user?: { id?: unknown; email?: unknown; phone?: unknown } | null;
  /** Milliseconds since epoch; becomes the first-seen time of an fbc built from `fbclid`. */
  now: number;
  /** GA4 measurement id (`G-ABC123`); picks the `_ga_ABC123` session cookie. Default: the first one. */
  measurementId?: string;
  /** Keys the derived client_id; pass the account id so ids differ between accounts. */
  clientIdSalt?: string;
}

/** Values as the platforms take them; none of them is ever hashed. */
export interface AttributionIds {
  /** GA4 `client_id`. */
  client_id?: string;
  /** `cookie` when read from `_ga`; `derived` when computed from the user. */
  client_id_source?: 'cookie' | 'derived';
  /** GA4 `session_id` for `measurementId` (or the first `_ga_*` cookie). */
  session_id?: string;
  /** Every parsed GA4 session, by container id (`ABC123` for `_ga_ABC123`). */
  ga_session_ids?: Record<string, string>;
  fbp?: string;
  fbc?: string;
  gclid?: string;
  gbraid?: string;
  wbraid?: string;
  ttclid?: string;
  ttp?: string;
}

export interface AttributionResult {
  ids: AttributionIds;
  warnings: PipelineWarning[];
}

/**
 * @example
 * extractAttribution({
 *   cookies: [{ name: '_ga', value: 'GA1.1.123.456' }, { name: '_fbp', value: 'fb.1.1700000000000.42' }],
 *   url: 'https://shop.example/?fbclid=IwAR2abc&gclid=Cj0KCQiA',
 *   now: 1700000000000,
 * })
 * // → { ids: { client_id: '123.456', client_id_source: 'cookie', fbp: 'fb.1.1700000000000.42',
 * //            fbc: 'fb.1.1700000000000.IwAR2abc', gclid: 'Cj0KCQiA' }, warnings: [] }
 */
export function extractAttribution(input: AttributionInput): AttributionResult {
  const warnings: PipelineWarning[] = [];
  const jar = cookieJar(input.cookies);
  const params: URLSearchParams[] = [];
  for (const [field, url] of [['context.url', input.url], ['context.landing_url', input.landingUrl]] as const) {
    if (typeof url !== 'string' || url.trim() === '') continue;
    const p = queryParams(url.trim());
    if (p !== null) params.push(p);
    else warnings.push({ field, code: 'URL_UNPARSEABLE', message: `${field} is not an absolute URL; no click ids read from it` });
  }
  const param = (name: string) => params.map((p) => cleanClickId(p.get(name))).find((v) => v !== undefined);

  /** The first value of `name` that `parse` accepts; a warning when values exist but none parses. */
  const cookie = (name: string, parse: (v: string) => string | undefined): string | undefined => {
    const values = jar.all(name);
    const found = values.map(parse).find((v) => v !== undefined);
    if (found === undefined && values.length > 0) {
      warnings.push({ field: `cookies.${name}`, code: 'COOKIE_MALFORMED', message: `cookie ${name} does not have the expected format; ignored` });
    }
    return found;
  };

  const ids: AttributionIds = {};

  const gaClientId = cookie('_ga', parseGaClientId);
  if (gaClientId !== undefined) {
    ids.client_id = gaClientId;
    ids.client_id_source = 'cookie';
  } else {
    const key = clientIdKey(input.user);
    if (key !== undefined) {
      ids.client_id = deriveClientId(key, input.clientIdSalt ?? 'tracklane');
      ids.client_id_source = 'derived';
      warnings.push({ field: 'cookies._ga', code: 'CLIENT_ID_DERIVED', message: 'no usable _ga cookie; GA4 client_id derived from the user' });
    } else {
      warnings.push({ field: 'cookies._ga', code: 'CLIENT_ID_MISSING', message: 'no usable _ga cookie and no user id, e-mail or phone to derive a GA4 client_id from' });
    }
  }

  const sessions: Record<string, string> = {};
  for (const { name, value } of jar.withPrefix('_ga_')) {
    const container = name.slice('_ga_'.length);
    if (container === '' || container in sessions) continue;
    const session = parseGaSessionId(value);
    if (session !== undefined) sessions[container] = session;
    else warnings.push({ field: `cookies.${name}`, code: 'COOKIE_MALFORMED', message: `cookie ${name} is neither GS1 nor GS2; ignored` });
  }
  if (Object.keys(sessions).length > 0) {
    ids.ga_session_ids = sessions;
    const wanted = input.measurementId?.replace(/^G-/i, '');
    ids.session_id = wanted !== undefined ? sessions[wanted] : Object.values(sessions)[0];
  }

  ids.fbp = cookie('_fbp', parseFbp);
  ids.fbc = cookie('_fbc', parseFbc);
  const fbclid = ids.fbc === undefined ? param('fbclid') : undefined;
  if (fbclid !== undefined) ids.fbc = buildFbc(fbclid, input.now);

  ids.gclid = param('gclid') ?? cookie('_gcl_aw', parseGclAw);
  ids.gbraid = param('gbraid');
  ids.wbraid = param('wbraid');
  if (ids.gbraid !== undefined && ids.wbraid !== undefined) {
    // Google Ads refuses both; wbraid is the one for web conversions.
    ids.gbraid = undefined;
    warnings.push({ field: 'context.url', code: 'CLICK_ID_CONFLICT', message: 'both gbraid and wbraid present; kept wbraid (web conversions)' });
  }

  ids.ttclid = param('ttclid');
  ids.ttp = cookie('_ttp', parseTtp);

  return { ids: dropUndefined(ids), warnings };
}

function clientIdKey(user: AttributionInput['user']): string | undefined {
  if (user == null) return undefined;
  const text = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v).trim() : '');
  const id = text(user.id);
  if (id !== '') return `id:${id}`;
  const email = text(user.email).toLowerCase();
  if (email !== '') return `email:${email}`;
  const phone = text(user.phone).replace(/[^\d+]/g, '');
  return phone !== '' ? `phone:${phone}` : undefined;
}

function dropUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
