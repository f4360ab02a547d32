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
  let sendable = claimed;
  if (claimed.some(isGone)) {
    unsendable.push({ deliveries: claimed.filter(isGone), message: 'nothing to send: the event is no longer stored, or its rules no longer map it' });
    sendable = claimed.filter((d) => !isGone(d));
  }
  for (const chunk of batchesFor(plugin, sendable)) {
    let requests: OutboundRequest[];
    try {
      requests = plugin.buildRequests({ settings, items: chunk.map(withMessageId), now });
    } catch (err) {
      unsendable.push({ deliveries: chunk, message: `${type}: building the request failed: ${(err as Error).message}` });
      continue;
    }
    // Deliveries by event id, in order: one delivery held as it is, a list only when an
    // event gave several native events (most give one; a list per delivery was most of
    // this function's allocations).
    const byEventId = new Map<string, ClaimedDelivery | ClaimedDelivery[]>();
    for (const d of chunk) {
      const id = d.item!.eventId;
      const held = byEventId.get(id);
      if (held === undefined) byEventId.set(id, d);
      else if (Array.isArray(held)) held.push(d);
      else byEventId.set(id, [held, d]);
    }
    for (const request of requests) {
      // Sized to the request's events (a list's first push reserves room for 17).
      const deliveries = new Array<ClaimedDelivery>(request.eventIds.length);
      let found = 0;
      for (const id of request.eventIds) {
        const held = byEventId.get(id);
        if (held === undefined) continue;
        if (!Array.isArray(held)) {
          deliveries[found++] = held;
          byEventId.delete(id);
          continue;
        }
        const d = held.shift();
        if (d !== undefined) deliveries[found++] = d;
      }
      deliveries.length = found;
      if (found === 0) continue;
      // Never hand HTTP a header it would refuse (and retry for a day): fail it, saying why.
      const bad = invalidHeader(request.headers);
      if (bad !== null) unsendable.push({ deliveries, message: `${type}: header ${bad} holds characters HTTP does not allow; not sent` });
      else units.push({ request, deliveries });
    }
    if (byEventId.size > 0) {
      const left: ClaimedDelivery[] = [];
      for (const held of byEventId.values()) {
        if (Array.isArray(held)) left.push(...held);
        else left.push(held);
      }
      if (left.length > 0) unsendable.push({ deliveries: left, message: `${type}: the plugin built no request for this event` });
    }
  }
  return { units, unsendable };
}

function isGone(d: ClaimedDelivery): boolean {
  return d.item === null;
}
