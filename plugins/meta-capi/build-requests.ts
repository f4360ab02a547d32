// Meta CAPI requests: one POST per ≤ 1,000 server events. The rule gives event_name and
// custom_data; this module adds time, ids, action_source, page URLs and user_data.
import { isSha256Hex, sha256Hex, chunk, addClientFields, expandBranch, mergeDotPaths, baseUrl, type BuildInput, type OutboundRequest, type OutgoingItem } from 'tracklane/sdk';
import { actionSource } from './action-source.ts';
import { DEFAULT_API_VERSION, DEFAULT_ENDPOINT, type MetaCapiSettings } from './settings.ts';

export const MAX_EVENTS = 1000;

const DAY_MS = 86_400_000;
/** Meta refuses the whole request when one event_time is older than this. */
const MAX_AGE_MS = 7 * DAY_MS;
const MAX_AGE_PHYSICAL_STORE_MS = 62 * DAY_MS;
/** Time the request may spend in flight; events this close to the limit are isolated too. */
const AGE_MARGIN_MS = 3_600_000;

type Json = Record<string, unknown>;

/**
 * Builds the requests for a group of items. Events Meta is likely to refuse (older than the
 * age limit, or with nothing in user_data) each go alone, since one bad event fails a batch.
 */
export function buildRequests({ settings, items, now }: BuildInput<MetaCapiSettings>): OutboundRequest[] {
  const url = requestUrl(settings);
  const batched: { item: OutgoingItem; event: Json }[] = [];
  const alone: { item: OutgoingItem; event: Json }[] = [];
  for (const item of items) {
    const event = serverEvent(item, settings);
    (isRisky(event, item, now) ? alone : batched).push({ item, event });
  }
  const groups = [...chunk(batched, MAX_EVENTS), ...alone.map((one) => [one])];
  return groups.map((group) => {
    const body: Json = { data: group.map((g) => g.event) };
    if (settings.test_event_code) body.test_event_code = settings.test_event_code;
    return {
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      eventIds: group.map((g) => g.item.eventId),
    };
  });
}

/**
 * `{endpoint}/{api_version}/{pixel_id}/events?access_token=…`. The token goes in the query,
 * the form the reference gives first; the URL therefore holds a secret and must be masked
 * wherever it is logged (as GA4's api_secret).
 */
export function requestUrl(settings: MetaCapiSettings): string {
  const base = baseUrl(settings.endpoint, DEFAULT_ENDPOINT);
  const version = settings.api_version ?? DEFAULT_API_VERSION;
  return `${base}/${version}/${encodeURIComponent(settings.pixel_id)}/events?access_token=${encodeURIComponent(settings.access_token)}`;
}

/** One `data[]` element. Envelope keys first; the rule's fields are merged over them. */
export function serverEvent(item: OutgoingItem, settings?: Pick<MetaCapiSettings, 'external_id_case_sensitive'>): Json {
  const { context } = item.event;
  const fields = item.native.fields;
  const event: Json = {
    event_name: fields.event_name,
    event_time: Math.floor(item.receivedAt / 1000),
    event_id: item.eventId,
    action_source: actionSource(context),
  };
  if (hasText(context.url)) event.event_source_url = context.url;
  if (hasText(context.referrer_url)) event.referrer_url = context.referrer_url;
  event.user_data = userData(item, settings?.external_id_case_sensitive === true);
  event.custom_data = {};
  mergeDotPaths(event, fields);
  if (Object.keys(event.custom_data as Json).length === 0) delete event.custom_data;
  return event;
}

/** Hashed identifiers from the pipeline, then the values Meta wants in plain text. */
function userData(item: OutgoingItem, externalIdCaseSensitive: boolean): Json {
  const user = expandBranch(item.identifiers, 'user_data');
  // The pipeline lower-cases external_id as Meta's SDK does; this destination keeps case.
  if (externalIdCaseSensitive && user.external_id !== undefined) {
    const raw = item.event.user?.external_id ?? item.event.user?.id;
    const id = typeof raw === 'string' ? raw.normalize('NFC').trim() : typeof raw === 'number' ? String(raw) : '';
    if (id !== '') user.external_id = isSha256Hex(id) ? id.toLowerCase() : sha256Hex(id);
  }
  const { context } = item.event;
  addClientFields(user, context);
  if (item.attribution.fbc) user.fbc = item.attribution.fbc;
  if (item.attribution.fbp) user.fbp = item.attribution.fbp;
  return user;
}

function isRisky(event: Json, item: OutgoingItem, now: number): boolean {
  const limit = event.action_source === 'physical_store' ? MAX_AGE_PHYSICAL_STORE_MS : MAX_AGE_MS;
  if (now - item.receivedAt > limit - AGE_MARGIN_MS) return true;
  const user = event.user_data;
  return typeof user !== 'object' || user === null || Object.keys(user).length === 0;
}

function hasText(v: unknown): v is string {
  return typeof v === 'string' && v.trim() !== '';
}
