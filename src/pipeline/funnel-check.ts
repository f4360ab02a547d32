// The spec asks that cart_viewed product ids match those of product_viewed and
// product_added_to_cart, so funnels can be built; test mode warns when one never did.
import type { NormalizedEvent, Issue } from '../schema/types.ts';
import type { EventStore } from '../store/types.ts';

export async function funnelWarnings(events: Pick<EventStore, 'seenProducts'>, scriptId: string, event: NormalizedEvent): Promise<Issue[]> {
  if (event.event.name !== 'cart_viewed' || event.products.length === 0) return [];
  const ids = event.products.map((p) => p.id);
  const seen = await events.seenProducts(scriptId, ids);
  const out: Issue[] = [];
  event.products.forEach((p, i) => {
    if (!seen.has(p.id)) {
      out.push({
        field: `products[${i}].id`,
        code: 'UNKNOWN_VALUE',
        message: `product id "${p.id}" was never sent in a product_viewed or product_added_to_cart event of this account; use the same ids so funnels can be built`,
      });
    }
  });
  return out;
}
