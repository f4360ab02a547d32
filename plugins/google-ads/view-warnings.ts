// A view or cart event uploaded as a click conversion counts as a conversion; on a
// primary conversion action it inflates the account's conversions and misleads bidding.
// They go out only with upload_view_conversions, and then the preview says so.
import type { BuildInput } from 'tracklane/sdk';
import type { GoogleAdsSettings } from './settings.ts';

export const VIEW_EVENTS: ReadonlySet<string> = new Set(['cart_viewed', 'product_viewed', 'product_added_to_cart', 'product_removed_from_cart']);

export function viewWarnings({ items }: BuildInput<GoogleAdsSettings>): string[] {
  const names = [...new Set(items.map((i) => i.event.event.name).filter((n) => VIEW_EVENTS.has(n)))];
  return names.map((n) =>
    `${n} is uploaded as a conversion (upload_view_conversions): make its conversion action secondary in Google Ads, or it inflates conversions and bidding`);
}
