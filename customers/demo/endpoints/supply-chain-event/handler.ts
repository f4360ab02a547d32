// supply-chain-event: one 3PL event. Each item becomes a signed stock_movement record
// (out for a dispatch, in for a receipt or return, as given for an adjustment); shipments
// get a shipment_status record. A delivery with an order id emits the event named in
// settings.delivered_event (the account must approve it); a full return, order_canceled.
import { type CustomHandler, type CustomRecord, type StandardEventPayload, customValidationError } from 'tracklane/sdk';

export type SupplyChainEventType = 'shipment_dispatched' | 'shipment_delivered' | 'stock_received' | 'stock_adjusted' | 'return_received';

export interface SupplyChainBody {
  event_id: string;
  event_type: SupplyChainEventType;
  occurred_at: string;
  warehouse_id: string;
  shipment?: { shipment_id: string; order_id?: string; carrier: string; tracking_number?: string };
  full_return?: boolean;
  items: { sku: string; quantity: number; lot?: string }[];
}

/** Stock direction of each event type: dispatched goods leave the warehouse. */
const DIRECTION: Record<SupplyChainEventType, -1 | 0 | 1> = {
  shipment_dispatched: -1,
  shipment_delivered: 0,
  stock_received: 1,
  stock_adjusted: 1,
  return_received: 1,
};

const handler: CustomHandler<SupplyChainBody> = (body, ctx) => {
  body.items.forEach((item, i) => {
    if (item.quantity < 0 && body.event_type !== 'stock_adjusted') {
      throw customValidationError(`items[${i}].quantity`, `a whole number above 0 for ${body.event_type}`,
        `items[${i}].quantity may be negative only for stock_adjusted`);
    }
  });
  if (body.full_return !== undefined && body.event_type !== 'return_received') {
    throw customValidationError('full_return', 'absent unless event_type is return_received', 'full_return applies only to return_received');
  }

  const records: CustomRecord[] = [];
  const events: StandardEventPayload[] = [];
  const messages: string[] = [];
  const direction = DIRECTION[body.event_type];
  if (direction !== 0) {
    body.items.forEach((item, i) => {
      records.push({
        type: 'stock_movement',
        key: `${body.event_id}:${i}`,
        data: {
          warehouse_id: body.warehouse_id,
          sku: item.sku,
          quantity: item.quantity * direction,
          ...(item.lot !== undefined && { lot: item.lot }),
          event_type: body.event_type,
          occurred_at: body.occurred_at,
        },
      });
    });
    messages.push(`${body.event_type} ${body.event_id}: ${records.length} stock movement${records.length === 1 ? '' : 's'} at ${body.warehouse_id}`);
  }
  const s = body.shipment;
  if (s) {
    records.push({
      type: 'shipment_status',
      key: `${s.shipment_id}:${body.event_type}`,
      data: { ...s, status: body.event_type, warehouse_id: body.warehouse_id, occurred_at: body.occurred_at, items: body.items.length },
    });
    messages.push(`shipment ${s.shipment_id}: ${body.event_type.replace('_', ' ')} (${s.carrier})`);
    const delivered = typeof ctx.settings.delivered_event === 'string' ? ctx.settings.delivered_event : null;
    if (body.event_type === 'shipment_delivered' && s.order_id && delivered) {
      events.push({ event: { name: delivered, id: s.order_id }, context: { environment: 'prod', data_source: 'admin' } });
      messages.push(`order ${s.order_id}: ${delivered}`);
    }
    if (body.event_type === 'return_received' && body.full_return === true && s.order_id) {
      events.push({ event: { name: 'order_canceled', id: s.order_id }, context: { environment: 'prod', data_source: 'admin' } });
      messages.push(`order ${s.order_id}: fully returned → order_canceled`);
    }
  }
  return { events, records, messages, recordsProcessed: body.items.length };
};

export default handler;
