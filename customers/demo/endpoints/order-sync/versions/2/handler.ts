// order-sync version 2 (current): a batch from the ERP, where an order's total is grand_total
// and the buyer is split into customer (who), contact (e-mail, phone) and address (city,
// country); version 1 sent them as total and one customer object. The same events result.
// A batch from the ERP. Each order → checkout_completed; each cancellation →
// order_canceled; shipped/delivered/refunded → an order_status record (no standard event
// fits them). One message per order and per status change says what became of it.
import { type CustomHandler, type CustomRecord, type StandardEventPayload, customValidationError } from 'tracklane/sdk';

export interface OrderItem {
  sku: string;
  name: string;
  category?: string;
  unit_price: number;
  list_price?: number;
  quantity: number;
  tax_percent?: number;
}

export interface Order {
  order_id: string;
  placed_at: string;
  currency: string;
  grand_total: number;
  shipping_total?: number;
  channel?: string;
  coupon?: string;
  payment_method?: string;
  consent?: { analytics: boolean; personalization: boolean; marketing: boolean };
  customer?: { id?: string; first_name?: string; last_name?: string };
  contact?: { email?: string; phone?: string };
  address?: { city?: string; country?: string };
  items: OrderItem[];
}

export interface StatusChange {
  order_id: string;
  status: 'canceled' | 'shipped' | 'delivered' | 'refunded';
  changed_at: string;
  reason?: string;
}

export interface OrderSyncBody {
  batch_id: string;
  sent_at?: string;
  orders?: Order[];
  status_changes?: StatusChange[];
}

export function checkoutEvent(o: Order, batchId: string, settings: Readonly<Record<string, unknown>>): StandardEventPayload {
  const channel = o.channel ?? (typeof settings.default_channel === 'string' ? settings.default_channel : 'admin');
  const ev: StandardEventPayload = {
    event: { name: 'checkout_completed', id: o.order_id, value: o.grand_total, currency: o.currency, properties: { batch_id: batchId } },
    context: { environment: 'prod', data_source: channel },
    products: o.items.map((i) => ({
      id: i.sku,
      name: i.name,
      ...(i.category !== undefined && { category: i.category }),
      price: i.unit_price,
      price_base: i.list_price ?? i.unit_price,
      quantity: i.quantity,
      tax_included: true,
      ...(i.tax_percent !== undefined && { tax_percent: i.tax_percent }),
    })),
  };
  if (o.shipping_total !== undefined) ev.shipping = [{ name: String(settings.shipping_name ?? 'Shipping'), value: o.shipping_total }];
  if (o.payment_method !== undefined) ev.payments = [{ type: o.payment_method, value: o.grand_total }];
  if (o.coupon !== undefined) ev.coupons = [{ name: o.coupon }];
  if (o.consent) ev.consent = { ...o.consent };
  if (o.customer || o.contact || o.address) ev.user = { ...o.customer, ...o.contact, ...o.address };
  return ev;
}

const handler: CustomHandler<OrderSyncBody> = (body, ctx) => {
  const orders = body.orders ?? [];
  const changes = body.status_changes ?? [];
  if (orders.length === 0 && changes.length === 0) {
    throw customValidationError('orders', 'an array with at least one order, or a non-empty status_changes', 'The batch has neither orders nor status changes');
  }
  const seen = new Map<string, number>();
  orders.forEach((o, i) => {
    const first = seen.get(o.order_id);
    if (first !== undefined) {
      throw customValidationError(`orders[${i}].order_id`, 'an order number not used earlier in the same batch', `orders[${i}].order_id repeats orders[${first}].order_id (${o.order_id})`);
    }
    seen.set(o.order_id, i);
  });

  const events: StandardEventPayload[] = [];
  const records: CustomRecord[] = [];
  const messages: string[] = [];
  for (const o of orders) {
    events.push(checkoutEvent(o, body.batch_id, ctx.settings));
    messages.push(`order ${o.order_id}: checkout_completed, ${o.grand_total} ${o.currency}, ${o.items.length} line${o.items.length === 1 ? '' : 's'}`);
  }
  for (const c of changes) {
    if (c.status === 'canceled') {
      events.push({ event: { name: 'order_canceled', id: c.order_id }, context: { environment: 'prod', data_source: 'admin' } });
      messages.push(`order ${c.order_id}: canceled → order_canceled`);
    } else {
      records.push({
        type: 'order_status',
        key: `${c.order_id}:${c.status}`,
        data: { order_id: c.order_id, status: c.status, changed_at: c.changed_at, ...(c.reason !== undefined && { reason: c.reason }) },
      });
      messages.push(`order ${c.order_id}: ${c.status}, recorded (no standard event for this status)`);
    }
  }
  return { events, records, messages, recordsProcessed: orders.length + changes.length };
};

export default handler;
