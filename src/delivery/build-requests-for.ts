// Claimed deliveries → the requests to send now, each paired with the deliveries it carries.
// Pure: the plugin builds at most batch.maxEvents items per call; requests name their events
// by eventId (repeated when one event gave several native events), so deliveries are handed
// out in order to the requests that carry them. Anything that cannot be sent is returned
// with the reason, to be recorded as failed.
import type { DestinationPlugin, OutboundRequest, OutgoingItem } from '../destinations/types.ts';
import { batchesFor } from '../destinations/chunk.ts';
import { invalidHeader, messageId } from '../destinations/message-id.ts';
import type { ClaimedDelivery } from './types.ts';

export interface RequestUnit {
  request: OutboundRequest;
  deliveries: ClaimedDelivery[];
}

export interface Unsendable {
  deliveries: ClaimedDelivery[];
  message: string;
}

/** The stored item with its message id, computed from the delivery (older rows lack it). */
function withMessageId(d: ClaimedDelivery): OutgoingItem {
  const item = d.item!;
  if (item.messageId !== undefined) return item as OutgoingItem;
  return {
    ...item,
    messageId: messageId({
      scriptId: d.scriptId, eventName: item.event.event.name, eventId: item.eventId, destinationId: d.destinationId, ruleId: item.native.ruleId,
    }),
  };
}

export function buildRequestsFor(
  plugin: DestinationPlugin, type: string, settings: Record<string, unknown>, claimed: readonly ClaimedDelivery[], now: number,
): { units: RequestUnit[]; unsendable: Unsendable[] } {
  const units: RequestUnit[] = [];
  const unsendable: Unsendable[] = [];
  const gone = claimed.filter((d) => d.item === null);
  if (gone.length > 0) unsendable.push({ deliveries: gone, message: 'the event is no longer stored; nothing to send' });
  const sendable = claimed.filter((d) => d.item !== null);
  for (const chunk of batchesFor(plugin, sendable)) {
    let requests: OutboundRequest[];
    try {
      requests = plugin.buildRequests({ settings, items: chunk.map(withMessageId), now });
    } catch (err) {
      unsendable.push({ deliveries: chunk, message: `${type}: building the request failed: ${(err as Error).message}` });
      continue;
    }
    const byEventId = new Map<string, ClaimedDelivery[]>();
    for (const d of chunk) {
      const list = byEventId.get(d.item!.eventId) ?? [];
      list.push(d);
      byEventId.set(d.item!.eventId, list);
    }
    for (const request of requests) {
      const deliveries = request.eventIds.map((id) => byEventId.get(id)?.shift()).filter((d): d is ClaimedDelivery => d !== undefined);
      if (deliveries.length === 0) continue;
      // Never hand HTTP a header it would refuse (and retry for a day): fail it, saying why.
      const bad = invalidHeader(request.headers);
      if (bad !== null) unsendable.push({ deliveries, message: `${type}: header ${bad} holds characters HTTP does not allow; not sent` });
      else units.push({ request, deliveries });
    }
    const left = [...byEventId.values()].flat();
    if (left.length > 0) unsendable.push({ deliveries: left, message: `${type}: the plugin built no request for this event` });
  }
  return { units, unsendable };
}
