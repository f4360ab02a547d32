// Measurement Protocol requests: one body per user envelope (client_id, user_id, user
// properties, user_data, consent, IP, user agent), at most 25 events and under 130 KB each.
import { expandDotPaths, chunk, withKeyOrder, baseUrl, type BuildInput, type OutboundRequest, type OutgoingItem } from 'tracklane/sdk';
import { DEFAULT_ENDPOINT, type Ga4Settings } from './settings.ts';
import { eventTime } from './event-time.ts';
import { IDENTIFIER_KINDS, identifierTest, type IdentifierTest } from './identifier-like.ts';
import { limitEnvelope, limitEvent } from './limits.ts';
import { scrubEvent } from './event-params.ts';
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
  const groups = new Map<string, { head: Json; events: Prepared[] }>();
  for (const item of items) {
    const prepared = prepare(item, now);
    // One item has no other to share a request with (a lane sends most GA4 events alone): not keyed.
    const key = items.length === 1 ? '' : JSON.stringify(prepared.head);
    const group = groups.get(key);
    if (group) group.events.push(prepared);
    else groups.set(key, { head: prepared.head, events: [prepared] });
  }
  const requests: OutboundRequest[] = [];
  for (const { head, events } of groups.values()) {
    for (const part of chunk(events, MAX_EVENTS)) requests.push(...sized(url, head, part));
  }
  return requests;
}

/**
 * `/mp/collect`, or in test mode (a test_event_code) the validation server `/debug/mp/collect`:
 * the same request, checked and never recorded; its validationMessages are the outcome.
 */
export function collectUrl(settings: Ga4Settings, validate = isTestMode(settings)): string {
  const base = baseUrl(settings.endpoint, DEFAULT_ENDPOINT);
  const query = new URLSearchParams({ measurement_id: settings.measurement_id, api_secret: settings.api_secret });
  return `${base}/${validate ? 'debug/' : ''}mp/collect?${query.toString()}`;
}

/** Endpoint 2's platform check: the same requests, to the validation server (never recorded). */
export function validationRequests(input: BuildInput<Ga4Settings>): OutboundRequest[] {
  const url = collectUrl(input.settings, true);
  return buildRequests(input).map((r) => ({ ...r, url }));
}

const isTestMode = (settings: Pick<Ga4Settings, 'test_event_code'>): boolean => Boolean(settings.test_event_code);

/** One request, or halves of it until each body fits under MAX_BODY_BYTES (one event always goes alone). */
function sized(url: string, head: Json, events: Prepared[]): OutboundRequest[] {
  const body = JSON.stringify(requestBody(head, events));
  if (events.length > 1 && Buffer.byteLength(body, 'utf8') >= MAX_BODY_BYTES) {
    const half = Math.ceil(events.length / 2);
    return [...sized(url, head, events.slice(0, half)), ...sized(url, head, events.slice(half))];
  }
  return [{
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json' },
    body,
    eventIds: events.map((e) => e.eventId),
  }];
}

/** One item as it will be sent: its request-level fields, its `events[]` member and time, and what was changed on the way. */
interface Prepared {
  eventId: string;
  head: Json;
  event: Json;
  micros: number;
  warnings: string[];
}

function prepare(item: OutgoingItem, now: number): Prepared {
  const isIdentifier = identifierTest(item.event.user);
  const { timestamp_micros: ruleMicros, user_properties: rawProperties, ...fields } = expandDotPaths(item.native.fields);
  const head = envelope(item, rawProperties, isIdentifier);
  const time = eventTime(ruleMicros, item.receivedAt, now);
  const event = nativeEvent(item, fields, time.tooOld, isIdentifier);
  const warnings = [...head.warnings, ...event.warnings];
  if (time.tooOld) warnings.push(TOO_OLD_WARNING);
  return { eventId: item.eventId, head: head.head, event: event.event, micros: time.micros, warnings };
}

/** The request-level fields that must be equal for events to share a request. */
function envelope(item: OutgoingItem, rawProperties: unknown, isIdentifier: IdentifierTest): { head: Json; warnings: string[] } {
  const { consent, context } = item.event;
  const head: Json = {};
  if (item.attribution.client_id !== undefined) head.client_id = item.attribution.client_id;
  const userId = first(item.identifiers.user_id);
  if (userId !== undefined) head.user_id = userId;
  const props = userProperties(rawProperties, isIdentifier);
  if (props.properties !== undefined) head.user_properties = props.properties;
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
  const warnings = [...props.warnings];
  // A user agent is whatever the client said it is: a bot or an app may put a contact in it.
  if (context.user_agent && isIdentifier(context.user_agent, 'formatted')) warnings.push(AGENT_WARNING);
  else if (context.user_agent) head.user_agent = context.user_agent;
  const limited = limitEnvelope(head);
  return { head: limited.head, warnings: [...warnings, ...limited.warnings] };
}

/** The request's timestamp_micros is its first event's time; another event carries its own when it differs. */
function requestBody(head: Json, prepared: Prepared[]): Json {
  const requestMicros = prepared[0].micros;
  const events = prepared.map(({ event, micros }) => (micros === requestMicros ? event : { ...event, timestamp_micros: micros }));
  return withKeyOrder({ ...head, timestamp_micros: requestMicros, events }, BODY_ORDER);
}

/**
 * One `events[]` member: the rule's name and params, the GA session when there is one, within
 * GA4's limits, and then without anything that identifies someone (page URLs redacted, other
 * strings dropped), so what is checked is exactly what is sent. A time GA4 would not keep
 * (older than 72 hours) is moved and the session left out: the moved time no longer falls inside it.
 */
function nativeEvent(item: OutgoingItem, fields: Json, tooOld: boolean, isIdentifier: IdentifierTest): { event: Json; warnings: string[] } {
  const { name, params, ...rest } = fields;
  const p: Json = isObject(params) ? { ...params } : {};
  const sessionId = item.attribution.session_id;
  if (sessionId !== undefined && !tooOld) {
    if (p.session_id === undefined) p.session_id = sessionId;
    if (p.engagement_time_msec === undefined) p.engagement_time_msec = SERVER_ENGAGEMENT_TIME_MSEC;
  }
  const limited = limitEvent({ name, params: p, ...rest });
  const scrubbed = scrubEvent(limited.event, isIdentifier);
  return { event: scrubbed.event, warnings: [...limited.warnings, ...scrubbed.warnings] };
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
 * mode, rule drafts on stored events): limits cut, identifiers and user properties refused,
 * times moved.
 */
export function requestWarnings({ settings, items, now }: BuildInput<Ga4Settings>): string[] {
  const warnings = new Set(items.flatMap((item) => prepare(item, now).warnings));
  if (isTestMode(settings)) warnings.add(TEST_MODE_WARNING);
  return [...warnings];
}

const TEST_MODE_WARNING =
  'test_event_code is set: events go to GA4\'s validation server (/debug/mp/collect), which checks them and records nothing; remove it for real traffic';

const TOO_OLD_WARNING =
  'an event older than 72 hours was sent with its time moved to 72 hours ago (GA4 keeps no older time) and without its session_id';
const AGENT_WARNING = `user_agent held what looks like an identifier (${IDENTIFIER_KINDS}) and was not sent`;
