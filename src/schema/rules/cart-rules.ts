// cart_viewed: event.value is the cart total, Σ price × quantity, and must say so within 0.01.
// Checked only when every line is well-formed (other errors already name a broken line) and
// priced in the event's currency (converting would guess at exchange-rate semantics).
import { CART_TOTAL_TOLERANCE } from '../event-requirements.ts';
import { isRecord } from '../guards.ts';
import { fail, type RuleContext } from './rule-context.ts';

/** Floating-point slack, so 0.01 apart still counts as equal. */
const EPSILON = 1e-9;

export function checkCartTotal(event: unknown, products: readonly unknown[], rc: RuleContext): void {
  if (!isRecord(event) || products.length === 0) return;
  const { value, currency } = event;
  if (typeof value !== 'number' || value < 0) return;
  let sum = 0;
  for (const p of products) {
    if (!isRecord(p)) return;
    const { price, quantity } = p;
    if (typeof price !== 'number' || price < 0 || typeof quantity !== 'number' || quantity <= 0) return;
    if (typeof p.currency === 'string' && p.currency !== currency) return;
    sum += price * quantity;
  }
  if (Math.abs(value - sum) > CART_TOTAL_TOLERANCE + EPSILON) {
    const total = Math.round(sum * 1e6) / 1e6;
    fail(rc, 'event.value', 'INCONSISTENT_VALUE',
      `event.value is ${value} but the products add up to ${total} (Σ price × quantity); on cart_viewed they must match within ${CART_TOTAL_TOLERANCE}`);
  }
}
