// What LinkedIn cannot use: an event with no hashed e-mail, no li_fat_id and not both names
// cannot be matched to a member (`unmatchable`: skipped, never sent); a landing page tagged as
// LinkedIn traffic without li_fat_id means enhanced conversion tracking is off; userInfo
// needs both names. Warnings are said once per build, without event data.
import { queryParams, type BuildInput, type OutgoingItem } from 'tracklane/sdk';
import { ID_KEYS } from './identifiers.ts';
import type { LinkedInSettings } from './settings.ts';

/** An event LinkedIn can never match: no userIds (hashed e-mail, li_fat_id) and no userInfo (both names). */
export function unmatchable(item: OutgoingItem): string | null {
  return hasEmail(item) || hasFatId(item) || hasBothNames(item)
    ? null
    : 'LinkedIn matches a conversion by a hashed email, the li_fat_id click id or first and last name together; this event has none (userIds would be empty) and cannot be attributed';
}

export function matchWarnings({ items }: BuildInput<LinkedInSettings>): string[] {
  const out: string[] = [];
  if (items.some((i) => !hasFatId(i) && fromLinkedInAd(i))) {
    out.push('the landing URL has utm_source=linkedin but no li_fat_id: turn on enhanced conversion tracking in Campaign Manager so LinkedIn adds li_fat_id to ad clicks');
  }
  if (items.some((i) => hasOneName(i))) {
    out.push('LinkedIn takes userInfo only with both first and last name; with one of them it is left out');
  }
  return out;
}

const hasEmail = (i: OutgoingItem) => i.identifiers[ID_KEYS.email] !== undefined;
const hasFatId = (i: OutgoingItem) => typeof i.attribution.li_fat_id === 'string';
const hasBothNames = (i: OutgoingItem) => i.identifiers[ID_KEYS.firstName] !== undefined && i.identifiers[ID_KEYS.lastName] !== undefined;
const hasOneName = (i: OutgoingItem) => (i.identifiers[ID_KEYS.firstName] !== undefined) !== (i.identifiers[ID_KEYS.lastName] !== undefined);

/** The page or landing URL says the visit came from LinkedIn (utm_source linkedin, any case). */
function fromLinkedInAd(i: OutgoingItem): boolean {
  const { url, landing_url: landing } = i.event.context;
  return [url, landing].some((u) => typeof u === 'string' && /linkedin/i.test(queryParams(u)?.get('utm_source') ?? ''));
}
