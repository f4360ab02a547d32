// The browser's own address and user agent, which the conversion APIs that match on them name
// alike (client_ip_address, client_user_agent, in plain text): one place for the plugins that
// send them, so the order and the empty-value rule stay the same for each.
import type { EventContext } from '../schema/types.ts';

/** Adds the event's client address and user agent to `user` when the payload carries them. */
export function addClientFields(user: Record<string, unknown>, context: Pick<EventContext, 'overide_ip' | 'user_agent'>): void {
  if (hasText(context.overide_ip)) user.client_ip_address = context.overide_ip;
  if (hasText(context.user_agent)) user.client_user_agent = context.user_agent;
}

function hasText(v: unknown): v is string {
  return typeof v === 'string' && v.trim() !== '';
}
