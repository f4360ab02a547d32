// Snap Conversions API v3 requests: one POST per ≤ 1,000 events to
// `/v3/{pixel_id}/events?access_token=…` (`/events/validate` with test_event_code). The rule
// gives event_name and custom_data; this module adds event_time (seconds), event_id,
// action_source, the page URL and user_data (hashed identifiers as arrays, IP, user agent,
// click id, _scid). An event Snap is sure to refuse goes in a request of its own, so it
// cannot sink the others.
import { chunk, addClientFields, expandBranch, mergeDotPaths, baseUrl, type BuildInput, type OutboundRequest, type OutgoingItem, type EventContext } from 'tracklane/sdk';
import { DEFAULT_ENDPOINT, type SnapchatSettings } from './settings.ts';

/** Snap's v3 pages state no cap; partners give 2,000 a request, we stay at half of it. */
export const MAX_EVENTS = 1000;

const DAY_MS = 86_400_000;
/** Snap reports events at most 37 days old. */
export const MAX_AGE_MS = 37 * DAY_MS;
/** Time a request may spend queued and in flight; events this close to the limit count as too old. */
const AGE_MARGIN_MS = 3_600_000;

type Json = Record<string, unknown>;

export function buildRequests({ settings, items, now }: BuildInput<SnapchatSettings>): OutboundRequest[] {
  return requestsTo(requestUrl(settings), items, now);
}

/** Endpoint 2's platform check: the same requests to `/events/validate`, which records none in production. */
export function validationRequests({ settings, items, now }: BuildInput<SnapchatSettings>): OutboundRequest[] {
  return requestsTo(requestUrl(settings, true), items, now);
}

function requestsTo(url: string, items: OutgoingItem[], now: number): OutboundRequest[] {
  const batched: OutgoingItem[] = [];
  const alone: OutgoingItem[] = [];
  for (const item of items) (tooOld(item, now) || !matchable(item) ? alone : batched).push(item);
  return [...chunk(batched, MAX_EVENTS), ...alone.map((one) => [one])].map((group) => ({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ data: group.map(conversionEvent) }),
    eventIds: group.map((i) => i.eventId),
  }));
}

/**
 * `{endpoint}/v3/{pixel_id}/events?access_token=…`, or `/events/validate` when a
 * test_event_code is set (or `validate`). The token goes in the query as Snap documents it,
 * so the URL holds a secret (previews show `****` there).
 */
export function requestUrl(
  settings: Pick<SnapchatSettings, 'endpoint' | 'pixel_id' | 'access_token' | 'test_event_code'>, validate = Boolean(settings.test_event_code),
): string {
  const path = validate ? 'events/validate' : 'events';
  return `${baseUrl(settings.endpoint, DEFAULT_ENDPOINT)}/v3/${encodeURIComponent(settings.pixel_id)}/${path}?access_token=${encodeURIComponent(settings.access_token)}`;
}

/** One `data[]` element: the envelope, then the rule's fields merged over it. */
export function conversionEvent(item: OutgoingItem): Json {
  const { context } = item.event;
  const event: Json = {
    event_name: item.native.fields.event_name,
    event_time: Math.floor(item.receivedAt / 1000),
    event_id: item.eventId,
    action_source: actionSource(context),
  };
  if (hasText(context.url)) event.event_source_url = context.url;
  event.user_data = userData(item);
  mergeDotPaths(event, item.native.fields);
  if (isRecord(event.custom_data)) event.custom_data = customData(event.custom_data);
  return event;
}

/** Hashes always as arrays (Snap's form), then what it takes in plain text. */
function userData(item: OutgoingItem): Json {
  const user = expandBranch(item.identifiers, 'user_data');
  for (const [k, v] of Object.entries(user)) if (typeof v === 'string') user[k] = [v];
  const { context } = item.event;
  addClientFields(user, context);
  const { sc_click_id: click, sc_cookie1: cookie } = item.attribution;
  if (typeof click === 'string') user.sc_click_id = click;
  if (typeof cookie === 'string') user.sc_cookie1 = cookie;
  return user;
}

/** Snap takes a content's quantity and item_price as strings. */
function customData(data: Json): Json {
  if (!Array.isArray(data.contents)) return data;
  const asText = (v: unknown) => (typeof v === 'number' ? String(v) : v);
  return {
    ...data,
    contents: data.contents.map((c: unknown) => (isRecord(c) ? { ...c, quantity: asText(c.quantity), item_price: asText(c.item_price) } : c)),
  };
}

/**
 * context.data_source → `action_source`: `WEB` for website events (and events with a page
 * URL and no data_source), `OFFLINE` for everything else (CRM, phone, admin, marketplace,
 * and app events: MOBILE_APP belongs to a Snap App ID, which this destination does not take).
 * @example actionSource({ environment: 'prod', data_source: 'crm' }) // 'OFFLINE'
 */
export function actionSource(context: EventContext): 'WEB' | 'OFFLINE' {
  const source = typeof context.data_source === 'string' ? context.data_source.trim().toLowerCase() : '';
  return source === 'website' || (source === '' && hasText(context.url)) ? 'WEB' : 'OFFLINE';
}

/** Older than Snap takes (37 days, less an hour for the way there). */
export function tooOld(item: Pick<OutgoingItem, 'receivedAt'>, now: number): boolean {
  return now - item.receivedAt > MAX_AGE_MS - AGE_MARGIN_MS;
}

/** Snap refuses an event without a hashed e-mail or phone, or both the IP address and the user agent. */
export function matchable(item: Pick<OutgoingItem, 'identifiers' | 'event'>): boolean {
  const { context } = item.event;
  return item.identifiers['user_data.em'] !== undefined || item.identifiers['user_data.ph'] !== undefined
    || (hasText(context.overide_ip) && hasText(context.user_agent));
}

export function hasText(v: unknown): v is string {
  return typeof v === 'string' && v.trim() !== '';
}

function isRecord(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
