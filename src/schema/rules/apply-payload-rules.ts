// The rules the schema cannot state (cross-field checks, cart_viewed specifics) and the
// defaults, applied in one pass over a private copy of the payload. Findings go to `rc`.
import type { JsonObject } from '../guards.ts';
import type { Cookie, NormalizedEvent, Payment, Shipping } from '../types.ts';
import { checkCartTotal } from './cart-rules.ts';
import { resolveConsent } from './consent-rules.ts';
import { normaliseContext } from './context-rules.ts';
import { normaliseCoupons } from './coupon-rules.ts';
import { normaliseEventMember } from './event-rules.ts';
import { normaliseLines } from './line-rules.ts';
import { normaliseProducts } from './product-rules.ts';
import type { RuleContext } from './rule-context.ts';
import { normaliseUser } from './user-rules.ts';

/**
 * Applies the rules to `draft`, mutating it, and returns it as the normalised event. The
 * result is meaningful only when `rc.errors` stays empty. Unknown top-level members are not
 * carried over (the caller keeps the body as received); unknown members of known objects are.
 */
export function applyPayloadRules(draft: JsonObject, rc: RuleContext): NormalizedEvent {
  const event = normaliseEventMember(draft.event);
  const products = normaliseProducts(draft.products, rc);
  if (rc.cart) checkCartTotal(event, products, rc);
  const normalised: NormalizedEvent = {
    event,
    context: normaliseContext(draft.context, rc),
    products,
    shipping: normaliseLines<Shipping>(draft.shipping),
    payments: normaliseLines<Payment>(draft.payments),
    coupons: normaliseCoupons(draft.coupons, 'coupons', rc),
    consent: resolveConsent(draft.consent, rc),
    cookies: Array.isArray(draft.cookies) ? (draft.cookies as Cookie[]) : [],
  };
  const user = normaliseUser(draft.user, rc);
  if (user !== undefined) normalised.user = user;
  return normalised;
}
