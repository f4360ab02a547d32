// Measurement Protocol requests: one body per user envelope (client_id, user_id, user
// properties, user_data, consent, IP, user agent), at most 25 events and under 130 KB each.
import { expandDotPaths } from '../../src/destinations/dot-path.ts';
import { chunk } from '../../src/destinations/chunk.ts';
import { withKeyOrder } from '../../src/destinations/key-order.ts';
import { baseUrl } from '../../src/destinations/settings-schema.ts';
import type { BuildInput, OutboundRequest, OutgoingItem } from '../../src/destinations/types.ts';
import { DEFAULT_ENDPOINT, type Ga4Settings } from './settings.ts';
import { eventTime } from './event-time.ts';
import { identifierTest } from './identifier-like.ts';
import { limitEnvelope, limitEvent } from './limits.ts';
import { PAGE_URL_PARAMS, redactUrl } from './page-urls.ts';
import { userProperties } from './user-properties.ts';

export const MAX_EVENTS = 25;
/** GA4 drops bodies of 130 KB or more; stay a little under. */
export const MAX_BODY_BYTES = 130_000;
/**
 * GA4 counts an event toward sessions and Realtime only with a non-zero engagement time.
 * A server event carries no real engagement, so it claims the least possible: 1 ms.
 */
export const SERVER_ENGAGEMENT_TIME_MSEC = 1;

type Json = Record<string, unknown>;

/** Top-level members in the order of GA4's reference. */
const BODY_ORDER = ['client_id', 'user_id', 'timestamp_micros', 'user_properties', 'user_data', 'consent', 'ip_override', 'user_agent', 'events'];
/** user_data members in GA4's documented order; anything else follows in table order. */
const USER_DATA_ORDER = ['sha256_email_address', 'sha256_phone_number', 'address'];
const ADDRESS_ORDER = ['sha256_first_name', 'sha256_last_name', 'sha256_street', 'city', 'region', 'postal_code', 'country'];

export function buildRequests(input: BuildInput<Ga4Settings>): OutboundRequest[] {
  const { settings, items, now } = input;
  const url = collectUrl(settings);
  const groups = new Map<string, { head: Json; items: OutgoingItem[] }>();
  for (const item of items) {
    const head = envelope(item);
    const key = JSON.stringify(head);
    const group = groups.get(key);
    if (group) group.items.push(item);
    else groups.set(key, { head, items: [item] });
  }
  const requests: OutboundRequest[] = [];
  for (const { head, items: groupItems } of groups.values()) {
    for (const part of chunk(groupItems, MAX_EVENTS)) requests.push(...sized(url, head, part, now));
  }
  return requests;
}

function collectUrl(settings: Ga4Settings): string {
  const base = baseUrl(settings.endpoint, DEFAULT_ENDPOINT);
  const query = new URLSearchParams({ measurement_id: settings.measurement_id, api_secret: settings.api_secret });
  return `${base}/mp/collect?${query.toString()}`;
}

/** One request, or halves of it until each body fits under MAX_BODY_BYTES (one event always goes alone). */
function sized(url: string, head: Json, items: OutgoingItem[], now: number): OutboundRequest[] {
  const body = JSON.stringify(requestBody(head, items, now));
  if (items.length > 1 && Buffer.byteLength(body, 'utf8') >= MAX_BODY_BYTES) {
    const half = Math.ceil(items.length / 2);
    return [...sized(url, head, items.slice(0, half), now), ...sized(url, head, items.slice(half), now)];
  }
  return [{
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json' },
    body,
    eventIds: items.map((i) => i.eventId),
  }];
}

/** The request-level fields that must be equal for events to share a request. */
function envelope(item: OutgoingItem): Json {
  const { consent, context } = item.event;
  const head: Json = {};
  if (item.attribution.client_id !== undefined) head.client_id = item.attribution.client_id;
  const userId = first(item.identifiers.user_id);
  if (userId !== undefined) head.user_id = userId;
  const { properties } = userProperties(expandDotPaths(item.native.fields).user_properties, item.event.user);
  if (properties !== undefined) head.user_properties = properties;
  // Hashed contact data goes only with ad_user_data GRANTED: a denial means the user did not
  // agree to their data being shared for advertising, and GA4 forwards it there.
  const userData = consent.marketing ? buildUserData(item.identifiers) : undefined;
  if (userData !== undefined) head.user_data = userData;
  // Personalised ads are advertising: they need the marketing consent as well as the
  // personalization one. non_personalized_ads is deprecated in favour of this object.
  head.consent = {
    ad_user_data: consent.marketing ? 'GRANTED' : 'DENIED',
    ad_personalization: consent.marketing && consent.personalization ? 'GRANTED' : 'DENIED',
  };
  if (context.overide_ip) head.ip_override = context.overide_ip;
  if (context.user_agent) head.user_agent = context.user_agent;
  return limitEnvelope(head).head;
}

/** The request's timestamp_micros is its first event's time; another event carries its own when it differs. */
function requestBody(head: Json, items: OutgoingItem[], now: number): Json {
  const built = items.map((item) => nativeEvent(item, now));
  const requestMicros = built[0].micros;
  const events = built.map(({ event, micros }) => (micros === requestMicros ? event : { ...event, timestamp_micros: micros }));
  return withKeyOrder({ ...head, timestamp_micros: requestMicros, events }, BODY_ORDER);
}

/**
 * One `events[]` member: the rule's name and params (page URLs redacted), the GA session when
 * there is one, and the event's time. A time GA4 would not keep (older than 72 hours) is moved
 * to 72 hours ago and the session left out: the moved time no longer falls inside that session.
 */
function nativeEvent(item: OutgoingItem, now: number): { event: Json; micros: number } {
  const { name, params, timestamp_micros: ruleMicros, user_properties: _requestLevel, ...rest } = expandDotPaths(item.native.fields);
  const time = eventTime(ruleMicros, item.receivedAt, now);
  const p: Json = isObject(params) ? { ...params } : {};
  const isIdentifier = identifierTest(item.event.user);
  for (const key of PAGE_URL_PARAMS) if (typeof p[key] === 'string') p[key] = redactUrl(p[key], isIdentifier).url;
  const sessionId = item.attribution.session_id;
  if (sessionId !== undefined && !time.tooOld) {
    if (p.session_id === undefined) p.session_id = sessionId;
    if (p.engagement_time_msec === undefined) p.engagement_time_msec = SERVER_ENGAGEMENT_TIME_MSEC;
  }
  return { event: limitEvent({ name, params: p, ...rest }).event, micros: time.micros };
}

/**
 * identifiers (`user_data.*` dot paths of the google table) → GA4 user_data. E-mails and
 * phones are always arrays (GA4 takes up to 3 of each); the address is an array of one
 * object, since a user has one address in the payload (GA4 would take 2).
 */
function buildUserData(identifiers: OutgoingItem['identifiers']): Json | undefined {
  const data: Json = {};
  const address: Json = {};
  for (const [path, value] of Object.entries(identifiers)) {
    if (path.startsWith('user_data.address.')) address[path.slice('user_data.address.'.length)] = first(value);
    else if (path.startsWith('user_data.')) data[path.slice('user_data.'.length)] = Array.isArray(value) ? value : [value];
  }
  if (Object.keys(address).length > 0) data.address = [withKeyOrder(address, ADDRESS_ORDER)];
  return Object.keys(data).length > 0 ? withKeyOrder(data, USER_DATA_ORDER) : undefined;
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function isObject(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * What the request leaves out or changes for these items (plugin warnings: previews, test
 * mode, rule drafts on stored events): limits cut, user properties refused, times moved.
 */
export function requestWarnings({ items, now }: BuildInput<Ga4Settings>): string[] {
  const out = new Set<string>();
  for (const item of items) {
    const head: Json = {};
    const userId = first(item.identifiers.user_id);
    if (userId !== undefined) head.user_id = userId;
    const { name, params, timestamp_micros: ruleMicros, user_properties: raw } = expandDotPaths(item.native.fields);
    const props = userProperties(raw, item.event.user);
    for (const w of props.warnings) out.add(w);
    if (props.properties !== undefined) head.user_properties = props.properties;
    for (const w of limitEnvelope(head).warnings) out.add(w);
    for (const w of limitEvent({ name, params }).warnings) out.add(w);
    if (eventTime(ruleMicros, item.receivedAt, now).tooOld) out.add(TOO_OLD_WARNING);
    const isIdentifier = identifierTest(item.event.user);
    for (const key of PAGE_URL_PARAMS) {
      const url = isObject(params) ? params[key] : undefined;
      if (typeof url === 'string' && redactUrl(url, isIdentifier).redacted) {
        out.add(`${key} held what looks like an identifier (an e-mail, a hash or one of the user's identifiers); that part was sent as (redacted)`);
      }
    }
  }
  return [...out];
}

const TOO_OLD_WARNING =
  'an event older than 72 hours was sent with its time moved to 72 hours ago (GA4 keeps no older time) and without its session_id';
