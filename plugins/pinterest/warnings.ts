// What Pinterest accepts but cannot match: an event needs a hashed e-mail, or both the
// client's IP address and user agent (mobile ad ids are not collected here). Said once per
// build, without event data.
import type { BuildInput } from 'tracklane/sdk';
import type { PinterestSettings } from './settings.ts';
import { isTestMode } from './build-requests.ts';

export function matchWarnings({ items, settings }: BuildInput<PinterestSettings>): string[] {
  const out: string[] = [];
  const unmatched = items.some((i) => i.identifiers['user_data.em'] === undefined
    && !(hasText(i.event.context.overide_ip) && hasText(i.event.context.user_agent)));
  if (unmatched) out.push('Pinterest needs a hashed email, or both the client IP address (context.overide_ip) and user agent; this event has neither and may not be matched');
  if (isTestMode(settings)) {
    out.push(`${settings.test === true ? 'test is on' : 'test_event_code is set'}: Pinterest checks these events and records none; turn it off for real traffic`);
  }
  return out;
}

function hasText(v: unknown): boolean {
  return typeof v === 'string' && v.trim() !== '';
}
