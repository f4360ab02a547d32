// What Snap accepts badly or refuses, said once per build without event data: no match key
// (Snap needs a hashed e-mail or phone, or the IP address and the user agent together), a
// visit from a Snapchat ad that lost its click id, no page URL (Snap requires
// event_source_url), an event past the 37-day limit, and test mode.
import { queryParams, type BuildInput, type OutgoingItem } from 'tracklane/sdk';
import { hasText, matchable, tooOld } from './build-requests.ts';
import type { SnapchatSettings } from './settings.ts';

export function snapWarnings({ items, settings, now }: BuildInput<SnapchatSettings>): string[] {
  const out: string[] = [];
  if (items.some((i) => !matchable(i))) {
    out.push('Snap needs a hashed email or phone, or both the client IP address (context.overide_ip) and user agent; this event has none of them and Snap refuses it as insufficient PII');
  }
  if (items.some((i) => fromSnapAd(i) && i.attribution.sc_click_id === undefined)) {
    out.push('the visit came from a Snapchat ad (utm_source=snapchat) but carries no ScCid click id: keep ScCid on the landing URL through redirects so the conversion is attributed to the click');
  }
  if (items.some((i) => !hasText(i.event.context.url))) {
    out.push('Snap requires event_source_url: send context.url, or set the account\'s host so it can stand in');
  }
  if (items.some((i) => tooOld(i, now))) out.push('an event is older than Snap\'s 37-day limit: Snap refuses it');
  if (settings.test_event_code) {
    out.push('test_event_code is set: events go to Snap\'s /events/validate, which checks them and records none in production; remove it for real traffic');
  }
  return out;
}

/** The page or landing URL says the visit came from Snapchat: `utm_source=snapchat` or `snap` (any case). */
function fromSnapAd(item: OutgoingItem): boolean {
  const { url, landing_url } = item.event.context;
  return [landing_url, url].some((u) => hasText(u) && /^snap(chat)?$/i.test(queryParams(u)?.get('utm_source')?.trim() ?? ''));
}
