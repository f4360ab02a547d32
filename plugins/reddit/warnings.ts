// What Reddit accepts but cannot use, said once per build without event data: an event
// with no match key at all, a visit from a Reddit ad (utm_source=reddit) that lost its
// rdt_cid click id, an event near Reddit's seven-day limit, and test mode left on.
import { queryParams, type BuildInput, type OutgoingItem } from 'tracklane/sdk';
import { MAX_AGE_MS } from './build-requests.ts';
import type { RedditSettings } from './settings.ts';

export function redditWarnings({ items, settings, now }: BuildInput<RedditSettings>): string[] {
  const out: string[] = [];
  if (items.some((i) => !hasMatchKey(i))) {
    out.push('no match keys — email, phone, external id, the rdt_cid click id, the _rdt_uuid cookie and IP address with user agent all missing: Reddit cannot attribute this event');
  }
  if (items.some((i) => fromRedditAd(i) && i.attribution.rdt_cid === undefined)) {
    out.push('the visit came from a Reddit ad (utm_source=reddit) but carries no rdt_cid click id: keep rdt_cid on the landing URL through redirects (or turn on the click ID parameter in Reddit Ads) so the conversion is attributed to the click');
  }
  if (items.some((i) => now - i.receivedAt > MAX_AGE_MS)) {
    out.push('the event is older than seven days: Reddit refuses events sent more than seven days after they happened');
  }
  if (settings.test_event_code !== undefined) {
    out.push('test_event_code is set: Reddit sends these events to Event Testing (one event per request is shown there); remove it for real traffic');
  }
  return out;
}

function hasMatchKey(item: OutgoingItem): boolean {
  const ids = item.identifiers;
  if (ids['user.email'] !== undefined || ids['user.phone_number'] !== undefined || ids['user.external_id'] !== undefined) return true;
  if (item.attribution.rdt_cid !== undefined || item.attribution.rdt_uuid !== undefined) return true;
  const { context } = item.event;
  return hasText(context.overide_ip) && hasText(context.user_agent);
}

/** The page or landing URL says the visit came from Reddit: `utm_source=reddit` (any case). */
function fromRedditAd(item: OutgoingItem): boolean {
  const { url, landing_url } = item.event.context;
  return [landing_url, url].some((u) => hasText(u) && /^reddit(\.com)?$/i.test(queryParams(u)?.get('utm_source')?.trim() ?? ''));
}

function hasText(v: unknown): v is string {
  return typeof v === 'string' && v.trim() !== '';
}
