// Google Ads conversion uploads: click conversions to
// :uploadClickConversions, retractions to :uploadConversionAdjustments, ≤ 2,000 per request.
// A rule says which service with its `kind` field, read and removed here.
import { expandDotPaths, withKeyOrder, baseUrl, type BuildInput, type OutboundRequest, type OutgoingItem } from 'tracklane/sdk';
import { DEFAULT_API_VERSION, DEFAULT_ENDPOINT, type GoogleAdsSettings } from './settings.ts';

export const MAX_EVENTS = 2000;
/** Google Ads takes at most 5 user identifiers per conversion. */
export const MAX_USER_IDENTIFIERS = 5;

type Json = Record<string, unknown>;
export type Kind = 'click' | 'adjustment';

const SERVICES: Record<Kind, { method: string; list: string }> = {
  click: { method: 'uploadClickConversions', list: 'conversions' },
  adjustment: { method: 'uploadConversionAdjustments', list: 'conversionAdjustments' },
};

/** ClickConversion members in proto order; rule fields not listed follow in rule order. */
const CLICK_ORDER = [
  'gclid', 'gbraid', 'wbraid', 'conversionAction', 'conversionDateTime', 'conversionValue', 'currencyCode',
  'orderId', 'userIdentifiers', 'consent', 'cartData',
];
const ADJUSTMENT_ORDER = [
  'adjustmentType', 'orderId', 'gclidDateTimePair', 'conversionAction', 'adjustmentDateTime', 'restatementValue',
];
const CART_ORDER = ['merchantId', 'feedCountryCode', 'feedLanguageCode', 'localTransactionCost', 'items'];
/** One of these per conversion; a rule's own value wins over attribution (e.g. a gclid kept by a CRM). */
const CLICK_IDS = ['gclid', 'wbraid', 'gbraid'] as const;
/** The identifiers table keys (see index.ts), in the order they are sent. */
export const IDENTIFIER_KEYS = ['hashedEmail', 'hashedPhoneNumber'] as const;

export function buildRequests(input: BuildInput<GoogleAdsSettings>): OutboundRequest[] {
  const { settings, items } = input;
  const customerId = digits(settings.customer_id);
  const base = `${baseUrl(settings.endpoint, DEFAULT_ENDPOINT)}/${settings.api_version ?? DEFAULT_API_VERSION}/customers/${customerId}`;
  const headers = requestHeaders(settings);

  const byKind = new Map<Kind, { entries: Json[]; eventIds: string[] }>();
  for (const item of items) {
    const { kind, fields } = splitKind(item);
    const entry = kind === 'click' ? clickConversion(item, fields, settings, customerId) : adjustment(item, fields, customerId);
    const group = byKind.get(kind) ?? { entries: [], eventIds: [] };
    group.entries.push(entry);
    group.eventIds.push(item.eventId);
    byKind.set(kind, group);
  }

  const requests: OutboundRequest[] = [];
  for (const [kind, { entries, eventIds }] of byKind) {
    const service = SERVICES[kind];
    for (let i = 0; i < entries.length; i += MAX_EVENTS) {
      const body: Json = { [service.list]: entries.slice(i, i + MAX_EVENTS), partialFailure: true };
      if (validatesOnly(settings)) body.validateOnly = true;
      requests.push({
        method: 'POST',
        url: `${base}:${service.method}`,
        headers: { ...headers },
        body: JSON.stringify(body),
        eventIds: eventIds.slice(i, i + MAX_EVENTS),
      });
    }
  }
  return requests;
}

/**
 * Test mode (a test_event_code, or validate_only): every upload, click conversions and
 * adjustments alike, carries `validateOnly: true`, so Google checks it and records nothing.
 */
export function validatesOnly(settings: Pick<GoogleAdsSettings, 'validate_only' | 'test_event_code'>): boolean {
  return settings.validate_only === true || Boolean(settings.test_event_code);
}

/** Endpoint 2's platform check: the same uploads with validateOnly: true (Google records nothing). */
export function validationRequests(input: BuildInput<GoogleAdsSettings>): OutboundRequest[] {
  return buildRequests({ ...input, settings: { ...input.settings, validate_only: true } });
}

/** The preview says test mode is on. */
export function testModeWarnings({ settings }: BuildInput<GoogleAdsSettings>): string[] {
  if (!validatesOnly(settings)) return [];
  const why = settings.validate_only === true ? 'validate_only' : 'test_event_code';
  return [`${why} is set: every upload carries validateOnly: true, so Google checks it and records nothing; remove it for real traffic`];
}

function requestHeaders(settings: GoogleAdsSettings): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  // With OAuth settings the core sets the header when sending, with a token it keeps fresh.
  if (settings.access_token !== undefined) headers.authorization = `Bearer ${settings.access_token}`;
  headers['developer-token'] = settings.developer_token;
  if (settings.login_customer_id !== undefined) headers['login-customer-id'] = digits(settings.login_customer_id);
  return headers;
}

/** The rule output without its `kind` (`click` when absent, or `adjustment`). */
function splitKind(item: OutgoingItem): { kind: Kind; fields: Json } {
  const { kind = 'click', ...fields } = expandDotPaths(item.native.fields);
  if (kind !== 'click' && kind !== 'adjustment') {
    throw new Error(`google-ads rule ${item.native.ruleId}: kind must be "click" or "adjustment", got ${JSON.stringify(kind)}`);
  }
  return { kind, fields };
}

function clickConversion(item: OutgoingItem, fields: Json, settings: GoogleAdsSettings, customerId: string): Json {
  const { attribution, event } = item;
  const own: Json = {};
  const ruleClickId = CLICK_IDS.find((k) => nonEmpty(fields[k]));
  const clickId = ruleClickId ?? CLICK_IDS.find((k) => nonEmpty(attribution[k]));
  if (clickId !== undefined) own[clickId] = ruleClickId !== undefined ? fields[clickId] : attribution[clickId];
  const action = conversionActionName(fields.conversionAction, customerId);
  if (action !== undefined) own.conversionAction = action;
  own.conversionDateTime = googleDateTime(item.receivedAt);
  // With ad_user_data denied the hashed contacts stay home; the consent field says why.
  const granted = event.consent.marketing;
  const identifiers = granted ? userIdentifiers(item.identifiers) : [];
  if (identifiers.length > 0) own.userIdentifiers = identifiers;
  own.consent = { adUserData: granted ? 'GRANTED' : 'DENIED' };
  const cart = cartData(fields.cartData, settings);
  if (cart !== undefined) own.cartData = cart;

  const rest = omit(fields, [...CLICK_IDS, 'conversionAction', 'conversionDateTime', 'userIdentifiers', 'consent', 'cartData']);
  // orderId is Google's dedup key: without the customer's event.id, tracklane's own stable
  // event id still makes a resent conversion come back ORDER_ID_ALREADY_IN_USE, not twice.
  if (!nonEmpty(rest.orderId)) rest.orderId = item.eventId;
  return withKeyOrder({ ...rest, ...own }, CLICK_ORDER);
}

function adjustment(item: OutgoingItem, fields: Json, customerId: string): Json {
  const own: Json = { adjustmentType: fields.adjustmentType ?? 'RETRACTION' };
  const action = conversionActionName(fields.conversionAction, customerId);
  if (action !== undefined) own.conversionAction = action;
  own.adjustmentDateTime = googleDateTime(item.receivedAt);
  const rest = omit(fields, ['adjustmentType', 'conversionAction', 'adjustmentDateTime']);
  return withKeyOrder({ ...rest, ...own }, ADJUSTMENT_ORDER);
}

/** `123` → `customers/{cid}/conversionActions/123`; a full resource name is kept as it is. */
function conversionActionName(value: unknown, customerId: string): string | undefined {
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  const id = String(value).trim();
  if (id === '') return undefined;
  return id.startsWith('customers/') ? id : `customers/${customerId}/conversionActions/${id}`;
}

/** One identifier per object, e-mails first, at most five. */
function userIdentifiers(identifiers: OutgoingItem['identifiers']): Json[] {
  const out: Json[] = [];
  for (const key of IDENTIFIER_KEYS) {
    const value = identifiers[key];
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) out.push({ [key]: v });
  }
  return out.slice(0, MAX_USER_IDENTIFIERS);
}

/**
 * The rule builds `cartData.items` (and `localTransactionCost`); the merchant and feed come
 * from settings. Without a merchant_id, or with no items, there is no cartData at all.
 */
function cartData(ruleCart: unknown, settings: GoogleAdsSettings): Json | undefined {
  if (settings.merchant_id === undefined || !isObject(ruleCart)) return undefined;
  if (!Array.isArray(ruleCart.items) || ruleCart.items.length === 0) return undefined;
  const cart: Json = { ...omit(ruleCart, ['merchantId', 'feedCountryCode', 'feedLanguageCode']) };
  // int64 fields are strings in proto3 JSON.
  cart.merchantId = String(settings.merchant_id);
  if (settings.feed_country_code !== undefined) cart.feedCountryCode = settings.feed_country_code.toUpperCase();
  if (settings.feed_language_code !== undefined) cart.feedLanguageCode = settings.feed_language_code.toLowerCase();
  return withKeyOrder(cart, CART_ORDER);
}

/** ms since epoch → `yyyy-mm-dd hh:mm:ss+00:00`, the form Google Ads requires (UTC). */
export function googleDateTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')}+00:00`;
}

function digits(id: string): string {
  return id.replace(/\D/g, '');
}

function nonEmpty(v: unknown): boolean {
  return typeof v === 'string' && v.trim() !== '';
}

function omit(obj: Json, keys: readonly string[]): Json {
  return Object.fromEntries(Object.entries(obj).filter(([k]) => !keys.includes(k)));
}

function isObject(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
