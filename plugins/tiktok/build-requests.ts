// TikTok Events API 2.0 requests: one POST per ≤ 1,000 events of one event source. The rule
// gives the event name and properties; this module adds time, ids, user and page.
import { chunk, expandBranch, mergeDotPaths, baseUrl, type BuildInput, type OutboundRequest, type OutgoingItem } from 'tracklane/sdk';
import { DEFAULT_ENDPOINT, type TiktokSettings } from './settings.ts';

export const MAX_EVENTS = 1000;

type Json = Record<string, unknown>;
type Source = 'web' | 'crm';

/**
 * Web events go to the pixel. A rule may ask for `event_source: "crm"` (CRM lead stages);
 * those go to `crm_event_set_id` in their own requests when it is configured, else to the
 * pixel as web events without the CRM-only `lead` object.
 */
export function buildRequests({ settings, items }: BuildInput<TiktokSettings>): OutboundRequest[] {
  const url = `${baseUrl(settings.endpoint, DEFAULT_ENDPOINT)}/open_api/v1.3/event/track/`;
  const groups: Record<Source, { item: OutgoingItem; event: Json }[]> = { web: [], crm: [] };
  for (const item of items) {
    const source: Source = item.native.fields.event_source === 'crm' && settings.crm_event_set_id ? 'crm' : 'web';
    groups[source].push({ item, event: trackEvent(item, source) });
  }
  const requests: OutboundRequest[] = [];
  for (const source of ['web', 'crm'] as const) {
    const sourceId = source === 'web' ? settings.pixel_code : settings.crm_event_set_id;
    for (const part of chunk(groups[source], MAX_EVENTS)) {
      const body: Json = { event_source: source, event_source_id: sourceId };
      if (settings.test_event_code) body.test_event_code = settings.test_event_code;
      body.data = part.map((p) => p.event);
      requests.push({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json', 'access-token': settings.access_token },
        body: JSON.stringify(body),
        eventIds: part.map((p) => p.item.eventId),
      });
    }
  }
  return requests;
}

/** One `data[]` element. Envelope keys first; the rule's fields are merged over them. */
export function trackEvent(item: OutgoingItem, source: Source): Json {
  const { context } = item.event;
  const { event_source: _directive, ...fields } = item.native.fields;
  const event: Json = {
    event: fields.event,
    event_time: Math.floor(item.receivedAt / 1000),
    event_id: item.eventId,
    user: user(item),
    properties: {},
  };
  const page: Json = {};
  if (hasText(context.url)) page.url = context.url;
  if (hasText(context.referrer_url)) page.referrer = context.referrer_url;
  if (Object.keys(page).length > 0) event.page = page;
  mergeDotPaths(event, fields);
  if (Object.keys(event.properties as Json).length === 0) delete event.properties;
  if (source === 'web') delete event.lead;
  return event;
}

/** Hashed identifiers from the pipeline, then the values TikTok wants in plain text. */
function user(item: OutgoingItem): Json {
  const out = expandBranch(item.identifiers, 'user');
  const { context } = item.event;
  if (item.attribution.ttclid) out.ttclid = item.attribution.ttclid;
  if (item.attribution.ttp) out.ttp = item.attribution.ttp;
  if (hasText(context.overide_ip)) out.ip = context.overide_ip;
  if (hasText(context.user_agent)) out.user_agent = context.user_agent;
  return out;
}

function hasText(v: unknown): v is string {
  return typeof v === 'string' && v.trim() !== '';
}
