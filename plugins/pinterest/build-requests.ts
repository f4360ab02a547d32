// Pinterest Conversions API requests: one POST per ≤ 1,000 events to
// `/v5/ad_accounts/{ad_account_id}/events` with a bearer token. The rule gives event_name
// and custom_data; this module adds event_time (seconds), event_id, action_source, the
// page URL and user_data (hashed identifiers as arrays, IP, user agent, epik click id).
import { chunk, addClientFields, expandBranch, mergeDotPaths, baseUrl, type BuildInput, type OutboundRequest, type OutgoingItem, type EventContext } from 'tracklane/sdk';
import { DEFAULT_ENDPOINT, type PinterestSettings } from './settings.ts';

export const MAX_EVENTS = 1000;

type Json = Record<string, unknown>;

export function buildRequests({ settings, items }: BuildInput<PinterestSettings>): OutboundRequest[] {
  const url = requestUrl(settings);
  return chunk(items, MAX_EVENTS).map((group) => ({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${settings.access_token}` },
    body: JSON.stringify({ data: group.map(conversionEvent) }),
    eventIds: group.map((i) => i.eventId),
  }));
}

/** `{endpoint}/v5/ad_accounts/{ad_account_id}/events`, with `?test=true` in test mode (`test`, or a test_event_code). */
export function requestUrl(settings: Pick<PinterestSettings, 'endpoint' | 'ad_account_id' | 'test' | 'test_event_code'>): string {
  const url = `${baseUrl(settings.endpoint, DEFAULT_ENDPOINT)}/v5/ad_accounts/${encodeURIComponent(settings.ad_account_id)}/events`;
  return isTestMode(settings) ? `${url}?test=true` : url;
}

export const isTestMode = (settings: Pick<PinterestSettings, 'test' | 'test_event_code'>): boolean =>
  settings.test === true || Boolean(settings.test_event_code);

/** One `data[]` element: the envelope, then the rule's fields merged over it. */
export function conversionEvent(item: OutgoingItem): Json {
  const { context } = item.event;
  const event: Json = {
    event_name: item.native.fields.event_name,
    action_source: actionSource(context),
    event_time: Math.floor(item.receivedAt / 1000),
    event_id: item.eventId,
  };
  if (hasText(context.url)) event.event_source_url = context.url;
  event.user_data = userData(item);
  mergeDotPaths(event, item.native.fields);
  if (isRecord(event.custom_data)) event.custom_data = customData(event.custom_data);
  return event;
}

/** Hashes always as arrays (Pinterest's form), then the values it takes in plain text. */
function userData(item: OutgoingItem): Json {
  const user = expandBranch(item.identifiers, 'user_data');
  for (const [k, v] of Object.entries(user)) if (typeof v === 'string') user[k] = [v];
  const { context } = item.event;
  addClientFields(user, context);
  const epik = item.attribution.epik;
  if (typeof epik === 'string') user.click_id = epik;
  return user;
}

/** Pinterest takes value and item prices as decimal strings. */
function customData(data: Json): Json {
  const out: Json = { ...data };
  if (typeof out.value === 'number') out.value = decimal(out.value);
  if (Array.isArray(out.contents)) {
    out.contents = out.contents.map((c: unknown) => (isRecord(c) && typeof c.item_price === 'number' ? { ...c, item_price: decimal(c.item_price) } : c));
  }
  return out;
}

const decimal = (n: number): string => String(Math.round(n * 100) / 100);

/**
 * context.data_source → `action_source`: `web` for website events (and events with a page
 * URL and no data_source), `app_android` / `app_ios` for app events by their user agent,
 * `offline` for everything else (CRM, phone, admin, marketplace, an app of unknown OS).
 * @example actionSource({ environment: 'prod', data_source: 'crm' }) // 'offline'
 */
export function actionSource(context: EventContext): string {
  const source = typeof context.data_source === 'string' ? context.data_source.trim().toLowerCase() : '';
  if (source === 'website' || (source === '' && hasText(context.url))) return 'web';
  if (source === 'app') {
    const ua = typeof context.user_agent === 'string' ? context.user_agent : '';
    if (/android/i.test(ua)) return 'app_android';
    if (/iphone|ipad|ios/i.test(ua)) return 'app_ios';
  }
  return 'offline';
}

function hasText(v: unknown): v is string {
  return typeof v === 'string' && v.trim() !== '';
}

function isRecord(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
