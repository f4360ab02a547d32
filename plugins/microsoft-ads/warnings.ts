// What Microsoft cannot use: an event with no identifier at all is refused by Microsoft
// (`unmatchable`: skipped, never sent). Warnings, said once per build without event data: a visit tagged as Microsoft Advertising traffic that
// lost its msclkid (the conversion cannot be tied to the click), consent denied (Microsoft
// then uses the event for no advertising purpose), an event past the 7-day window.
import { queryParams, type BuildInput, type OutgoingItem } from 'tracklane/sdk';
import { uetEvent, userData } from './build-requests.ts';
import type { MicrosoftAdsSettings } from './settings.ts';

const WINDOW_S = 7 * 86_400;
/** utm_source values that mark a Microsoft Advertising click. */
const MICROSOFT_SOURCES = new Set(['bing', 'bingads', 'microsoft', 'microsoftads', 'microsoft_ads', 'microsoft-ads', 'msads', 'msn']);
const IDENTIFIERS = ['anonymousId', 'externalId', 'em', 'ph', 'msclkid'];

/** An event Microsoft refuses: its userData has none of the identifiers (IP and user agent alone do not count). */
export function unmatchable(item: OutgoingItem): string | null {
  const user = userData(item, item.event.consent.marketing);
  return IDENTIFIERS.some((k) => user[k] !== undefined)
    ? null
    : 'Microsoft needs at least one identifier in userData (msclkid, the _uetvid visitor id, a hashed email or phone, or a customer id); this event has none and would be refused';
}

export function matchWarnings({ items, now }: BuildInput<MicrosoftAdsSettings>): string[] {
  const events = items.map((item) => ({ item, event: uetEvent(item) }));
  const out: string[] = [];
  if (events.some(({ item }) => item.attribution.msclkid === undefined && fromMicrosoftAd(item))) {
    out.push('the page URL is tagged as Microsoft Advertising traffic (utm_source) but carries no msclkid: turn on auto-tagging of the Microsoft Click ID, or this conversion cannot be attributed to the ad click');
  }
  if (events.some(({ event }) => event.adStorageConsent === 'D')) {
    out.push('marketing consent is refused: sent with adStorageConsent D and without hashed email, phone or customer id; Microsoft uses it for no advertising purpose, conversions included');
  }
  if (events.some(({ event }) => typeof event.eventTime === 'number' && now / 1000 - event.eventTime > WINDOW_S)) {
    out.push('eventTime is more than 7 days old: Microsoft skips this event');
  }
  return out;
}

function fromMicrosoftAd(item: OutgoingItem): boolean {
  const { url, landing_url: landing } = item.event.context;
  return [url, landing].some((u) => {
    const source = typeof u === 'string' ? queryParams(u)?.get('utm_source') : undefined;
    return typeof source === 'string' && MICROSOFT_SOURCES.has(source.trim().toLowerCase());
  });
}
