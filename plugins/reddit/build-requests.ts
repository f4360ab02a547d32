// Reddit Conversions API v3 requests: one POST per ≤ 1,000 events to
// `/api/v3/pixels/{pixel_id}/conversion_events` with a bearer token and the body
// `{"data": {"events": [...]}}`. The rule gives the type and metadata; this module adds
// event_at (ms), action_source, the page URL, the click id, metadata.conversion_id and
// the user's match keys in Reddit's normal forms.
import { chunk, expandBranch, mergeDotPaths, baseUrl, type BuildInput, type OutboundRequest, type OutgoingItem, type EventContext } from 'tracklane/sdk';
import { redditEmailHash, redditIpHash } from './identifiers.ts';
import { DEFAULT_ENDPOINT, type RedditSettings } from './settings.ts';

export const MAX_EVENTS = 1000;

const DAY_MS = 86_400_000;
/** Reddit takes events up to seven days after they happened. */
export const MAX_AGE_MS = 7 * DAY_MS;
/** Time a request may spend queued and in flight; events this close to the limit go alone. */
const AGE_MARGIN_MS = 3_600_000;

type Json = Record<string, unknown>;

/**
 * Builds the requests for a group of items. Reddit refuses a whole request when one event
 * is invalid ("None were processed"), so an event near the seven-day limit goes alone.
 */
export function buildRequests({ settings, items, now }: BuildInput<RedditSettings>): OutboundRequest[] {
  const url = requestUrl(settings);
  const batched: OutgoingItem[] = [];
  const alone: OutgoingItem[] = [];
  for (const item of items) (now - item.receivedAt > MAX_AGE_MS - AGE_MARGIN_MS ? alone : batched).push(item);
  const groups = [...chunk(batched, MAX_EVENTS), ...alone.map((one) => [one])];
  return groups.map((group) => {
    const data: Json = {};
    if (settings.test_event_code !== undefined) data.test_id = settings.test_event_code;
    data.events = group.map(conversionEvent);
    return {
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${settings.access_token}` },
      body: JSON.stringify({ data }),
      eventIds: group.map((i) => i.eventId),
    };
  });
}

/** `{endpoint}/api/v3/pixels/{pixel_id}/conversion_events`. */
export function requestUrl(settings: Pick<RedditSettings, 'endpoint' | 'pixel_id'>): string {
  return `${baseUrl(settings.endpoint, DEFAULT_ENDPOINT)}/api/v3/pixels/${encodeURIComponent(settings.pixel_id)}/conversion_events`;
}

/** One `data.events[]` element: the envelope, then the rule's fields merged over it. */
export function conversionEvent(item: OutgoingItem): Json {
  const { context } = item.event;
  const rule = item.native.fields;
  const source = typeof rule.action_source === 'string' ? rule.action_source : actionSource(context);
  const event: Json = { event_at: item.receivedAt, action_source: source };
  if (source === 'WEBSITE' && hasText(context.url)) event.event_source_url = context.url;
  const offline = source === 'PHYSICAL_STORE';
  const clickId = item.attribution.rdt_cid;
  if (!offline && typeof clickId === 'string') event.click_id = clickId;
  mergeDotPaths(event, rule);
  event.metadata = { ...(isRecord(event.metadata) ? event.metadata : {}), conversion_id: item.eventId };
  const user = userOf(item, offline);
  if (Object.keys(user).length > 0) event.user = user;
  return event;
}

/**
 * The match keys: hashed e-mail, phone and external id; the hashed IP address, the user
 * agent and the `_rdt_uuid` value. Offline (physical store) events carry no browser or
 * device identifiers, as Reddit asks.
 */
function userOf(item: OutgoingItem, offline: boolean): Json {
  const user = expandBranch(item.identifiers, 'user');
  const email = redditEmailHash(item.event.user?.email);
  if (email !== undefined) user.email = email;
  else delete user.email;
  if (offline) return user;
  const { context } = item.event;
  if (hasText(context.overide_ip)) user.ip_address = redditIpHash(context.overide_ip);
  if (hasText(context.user_agent)) user.user_agent = context.user_agent;
  const uuid = item.attribution.rdt_uuid;
  if (typeof uuid === 'string') user.uuid = uuid;
  return user;
}

/**
 * context.data_source → `action_source`: `WEBSITE` for website events (and events with a
 * page URL and no data_source), `APP` for app events, `OTHER` for the rest (CRM, phone,
 * admin, marketplace). `PHYSICAL_STORE` only where a rule says so.
 * @example actionSource({ environment: 'prod', data_source: 'crm' }) // 'OTHER'
 */
export function actionSource(context: EventContext): string {
  const source = typeof context.data_source === 'string' ? context.data_source.trim().toLowerCase() : '';
  if (source === 'website' || (source === '' && hasText(context.url))) return 'WEBSITE';
  if (source === 'app') return 'APP';
  return 'OTHER';
}

function hasText(v: unknown): v is string {
  return typeof v === 'string' && v.trim() !== '';
}

function isRecord(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
