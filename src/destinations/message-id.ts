// Identifiers tracklane generates for what it sends, never taken from the customer.
// `messageId`: one native event of one event for one destination — unique per (account,
// event name, event.id, destination, rule), the same on every retry and replay, and made
// of [0-9a-f] only, so it is safe in any header (the webhook's `webhook-id`).
import { hash } from 'node:crypto';

export interface MessageIdParts {
  scriptId: string;
  eventName: string;
  eventId: string;
  destinationId: string;
  ruleId: string;
}

export function messageId(p: MessageIdParts): string {
  // One-shot hash of the parts, each ended by NUL (a third of the cost of a Hash object per id).
  const input = `${p.scriptId}\u0000${p.eventName}\u0000${p.eventId}\u0000${p.destinationId}\u0000${p.ruleId}\u0000`;
  return `msg_${hash('sha256', input, 'hex').slice(0, 32)}`;
}

/** Header values HTTP allows: visible ASCII, space, tab and obs-text bytes; nothing else. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** Header names HTTP allows (a token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The first header whose name or value HTTP would refuse, or null. */
export function invalidHeader(headers: Record<string, string>): string | null {
  for (const name in headers) {
    if (!Object.hasOwn(headers, name)) continue;
    if (!HEADER_NAME.test(name) || !HEADER_VALUE.test(headers[name])) return name;
  }
  return null;
}
