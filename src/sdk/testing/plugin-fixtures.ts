// Building blocks for a plugin's unit tests: a validated event with only what the test
// names, and a platform reply. Each plugin test keeps its own defaults and expected values.
import type { PlatformResponse } from '../../destinations/types.ts';
import type { NormalizedEvent } from '../../schema/types.ts';

/**
 * A NormalizedEvent as validateEvent would return it: `event` and `context` as given, no
 * products, shipping, payments, coupons or cookies, every consent granted; `fields` may
 * replace any of those.
 *
 * @example normalizedEvent({ event: { name: 'lead_created', exchange_rate: 1 }, context: { environment: 'prod' } })
 */
export function normalizedEvent(fields: Pick<NormalizedEvent, 'event' | 'context'> & Partial<NormalizedEvent>): NormalizedEvent {
  const { event, context, ...rest } = fields;
  return {
    event,
    context,
    products: [],
    shipping: [],
    payments: [],
    coupons: [],
    consent: { analytics: true, personalization: true, marketing: true },
    cookies: [],
    ...rest,
  };
}

/** A platform's reply; a body that is not a string is sent as its JSON. */
export function reply(status: number, body: unknown = '', headers: Record<string, string> = {}): PlatformResponse {
  return { status, headers, body: typeof body === 'string' ? body : JSON.stringify(body) };
}
