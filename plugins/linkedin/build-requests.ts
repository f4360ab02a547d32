// LinkedIn Conversions API requests: one BATCH_CREATE POST per ≤ 5,000 events to
// `/rest/conversionEvents` with the versioned headers and a bearer token. The rule gives the
// conversion rule and value; this module adds the URN, conversionHappenedAt (ms), eventId
// (deduplicated against the Insight Tag) and user (userIds, userInfo, externalIds).
import { chunk, baseUrl, type BuildInput, type OutboundRequest, type OutgoingItem } from 'tracklane/sdk';
import { ID_KEYS } from './identifiers.ts';
import { DEFAULT_API_VERSION, DEFAULT_ENDPOINT, type LinkedInSettings } from './settings.ts';

/** Conversion events one BATCH_CREATE may carry. */
export const MAX_EVENTS = 5000;
export const CONVERSION_URN_PREFIX = 'urn:lla:llaPartnerConversion:';

type Json = Record<string, unknown>;

export function buildRequests({ settings, items }: BuildInput<LinkedInSettings>): OutboundRequest[] {
  const url = `${baseUrl(settings.endpoint, DEFAULT_ENDPOINT)}/rest/conversionEvents`;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  // With OAuth settings the core sets the header when sending, with a token it keeps fresh.
  if (settings.access_token !== undefined) headers.authorization = `Bearer ${settings.access_token}`;
  headers['linkedin-version'] = settings.api_version ?? DEFAULT_API_VERSION;
  headers['x-restli-protocol-version'] = '2.0.0';
  headers['x-restli-method'] = 'BATCH_CREATE';
  return chunk(items, MAX_EVENTS).map((group) => ({
    method: 'POST',
    url,
    headers: { ...headers },
    body: JSON.stringify({ elements: group.map(conversionEvent) }),
    eventIds: group.map((i) => i.eventId),
  }));
}

/** One `elements[]` member, keys in the order of LinkedIn's own example. */
export function conversionEvent(item: OutgoingItem): Json {
  const fields = item.native.fields;
  const event: Json = {
    conversion: conversionUrn(fields.conversion),
    conversionHappenedAt: item.receivedAt,
  };
  const value = conversionValue(fields.conversionValue);
  if (value !== undefined) event.conversionValue = value;
  event.user = user(item);
  event.eventId = item.eventId;
  return event;
}

/**
 * A rule id (digits, a number, or the URN already) → the URN LinkedIn takes.
 * @example conversionUrn('104012') // 'urn:lla:llaPartnerConversion:104012'
 */
export function conversionUrn(id: unknown): string {
  const s = typeof id === 'number' ? String(id) : typeof id === 'string' ? id.trim() : '';
  if (s === '') throw new Error('the rule gave no conversion rule id');
  return s.startsWith(CONVERSION_URN_PREFIX) ? s : `${CONVERSION_URN_PREFIX}${s}`;
}

/** `{currencyCode, amount}` with the amount as a decimal string, only when both are known. */
function conversionValue(v: unknown): Json | undefined {
  if (!isRecord(v) || typeof v.currencyCode !== 'string') return undefined;
  const amount = typeof v.amount === 'number' ? decimal(v.amount) : v.amount;
  return typeof amount === 'string' && amount !== '' ? { currencyCode: v.currencyCode, amount } : undefined;
}

/**
 * userIds (hashed e-mail, then li_fat_id), userInfo only with both names (LinkedIn requires
 * firstName and lastName in it; company, title and country ride along), and externalIds
 * (LinkedIn uses the first of the list).
 */
function user(item: OutgoingItem): Json {
  const ids = item.identifiers;
  const userIds: Json[] = [];
  const email = first(ids[ID_KEYS.email]);
  if (email !== undefined) userIds.push({ idType: 'SHA256_EMAIL', idValue: email });
  const fat = item.attribution.li_fat_id;
  if (typeof fat === 'string') userIds.push({ idType: 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID', idValue: fat });
  const out: Json = { userIds };
  const info = userInfo(item);
  if (info !== undefined) out.userInfo = info;
  const external = first(ids[ID_KEYS.externalId]);
  if (external !== undefined) out.externalIds = [external];
  return out;
}

function userInfo(item: OutgoingItem): Json | undefined {
  const ids = item.identifiers;
  const firstName = first(ids[ID_KEYS.firstName]);
  const lastName = first(ids[ID_KEYS.lastName]);
  if (firstName === undefined || lastName === undefined) return undefined;
  const fromRule = isRecord(item.native.fields.user) && isRecord(item.native.fields.user.userInfo) ? item.native.fields.user.userInfo : {};
  const info: Json = { firstName, lastName };
  if (typeof fromRule.title === 'string') info.title = fromRule.title;
  if (typeof fromRule.companyName === 'string') info.companyName = fromRule.companyName;
  const country = first(ids[ID_KEYS.countryCode]);
  if (country !== undefined) info.countryCode = country;
  return info;
}

/**
 * A number as LinkedIn writes amounts: cents at most, a whole number with `.0`.
 * @example decimal(1500) // '1500.0'
 * @example decimal(134.849) // '134.85'
 */
export function decimal(n: number): string {
  const rounded = Math.round(n * 100) / 100;
  return Number.isInteger(rounded) ? rounded.toFixed(1) : String(rounded);
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function isRecord(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
