// Microsoft Advertising Conversions API requests: one POST per ≤ 1,000 events to
// `/v1/{tag_id}/events` with the UET tag's token as a bearer token, the body
// `{data, continueOnValidationError: true, dataProvider: "tracklane"}`. The rule gives the
// event type and name and customData; this module adds eventId, eventTime, the page URLs,
// adStorageConsent and userData (hashed e-mail, phone and customer id, msclkid, the UET
// visitor id, IP and user agent).
import { chunk, mergeDotPaths, baseUrl, type BuildInput, type OutboundRequest, type OutgoingItem } from 'tracklane/sdk';
import { emailHash } from './email-hash.ts';
import { DEFAULT_ENDPOINT, type MicrosoftAdsSettings } from './settings.ts';

export const MAX_EVENTS = 1000;
/** Microsoft asks third-party senders to name themselves, for its analysis and debugging. */
export const DATA_PROVIDER = 'tracklane';

type Json = Record<string, unknown>;

export function buildRequests({ settings, items }: BuildInput<MicrosoftAdsSettings>): OutboundRequest[] {
  const url = requestUrl(settings);
  return chunk(items, MAX_EVENTS).map((group) => ({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${settings.access_token}` },
    // One invalid event (too old, say) must not cost the batch: Microsoft skips it and says so.
    body: JSON.stringify({ data: group.map(uetEvent), continueOnValidationError: true, dataProvider: DATA_PROVIDER }),
    eventIds: group.map((i) => i.eventId),
  }));
}

/** `{endpoint}/v1/{tag_id}/events`. */
export function requestUrl(settings: Pick<MicrosoftAdsSettings, 'endpoint' | 'tag_id'>): string {
  return `${baseUrl(settings.endpoint, DEFAULT_ENDPOINT)}/v1/${encodeURIComponent(settings.tag_id)}/events`;
}

/** One `data[]` element: the envelope in the guide's order, then the rule's fields merged over it. */
export function uetEvent(item: OutgoingItem): Json {
  const { context, consent } = item.event;
  const fields = item.native.fields;
  const event: Json = { eventType: fields.eventType ?? 'custom', eventId: item.eventId };
  if (fields.eventName !== undefined) event.eventName = fields.eventName;
  // The event's own time: a rule may give it (seconds); else when tracklane received it.
  event.eventTime = typeof fields.eventTime === 'number' ? fields.eventTime : Math.floor(item.receivedAt / 1000);
  if (hasText(context.url)) event.eventSourceUrl = context.url;
  if (hasText(context.referrer_url)) event.referrerUrl = context.referrer_url;
  event.adStorageConsent = consent.marketing ? 'G' : 'D';
  event.userData = userData(item, consent.marketing);
  mergeDotPaths(event, fields);
  return event;
}

/**
 * At least one identifier must be here or Microsoft refuses the event. With marketing
 * consent refused (a destination gated on analytics) the hashed contacts stay home.
 */
export function userData(item: OutgoingItem, marketing: boolean): Json {
  const user: Json = {};
  const { context } = item.event;
  if (hasText(context.user_agent)) user.clientUserAgent = context.user_agent;
  if (typeof item.attribution.uetvid === 'string') user.anonymousId = item.attribution.uetvid;
  if (marketing) {
    const externalId = item.identifiers['userData.externalId'];
    if (typeof externalId === 'string') user.externalId = externalId;
    const em = emailHash(item);
    if (em !== undefined) user.em = em;
    const ph = item.identifiers['userData.ph'];
    if (typeof ph === 'string') user.ph = ph;
  }
  if (hasText(context.overide_ip)) user.clientIpAddress = context.overide_ip;
  if (typeof item.attribution.msclkid === 'string') user.msclkid = item.attribution.msclkid;
  return user;
}

function hasText(v: unknown): v is string {
  return typeof v === 'string' && v.trim() !== '';
}
