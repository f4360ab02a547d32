// Poison events: an event whose mapping kills the delivery thread (out of memory, a crash)
// or stalls it until the watchdog ends it would otherwise be claimed again by the next
// thread, and kill it again, for ever, while every other tenant's events wait behind it.
//
// The store counts, per queued event, the fan-outs that started mapping it and never
// finished (`interrupted`: a claim adds one; a completed fan-out removes the event from the
// queue or resets it). It needs no word from the dying thread, so a whole process that dies
// (kill -9, the host's OOM killer, DELIVERY_THREAD=0) counts the same. A crash in a batch
// makes every event of it a suspect; a suspect is then claimed alone, so innocent ones go
// through one by one and the next interruption is the suspect's own. An event interrupted
// MAPPING_INTERRUPTIONS times is not mapped again: each destination it still owes gets a
// `failed` delivery with the reason `mapping_failed`. Once its rules are fixed, replaying
// such a delivery queues the event for that destination again (the store's replay).
import type { DestinationRecord } from '../store/types.ts';
import { MAPPING_FAILED, partKey, type DispatchEvent, type NewDelivery } from './types.ts';

/** Interrupted mappings after which an event is failed instead of mapped again. */
export const MAPPING_INTERRUPTIONS = 2;

/** The event's mapping was cut short too often: fail it rather than map it again. */
export const isPoison = (e: DispatchEvent): boolean => (e.interrupted ?? 0) >= MAPPING_INTERRUPTIONS;

/** One failed row per destination the event still owes (those an earlier fan-out stored are left as they are). */
export function mappingFailedRows(destinations: readonly DestinationRecord[], stored: ReadonlySet<string> | undefined, interrupted: number): NewDelivery[] {
  const message = `mapping this event stopped the delivery thread ${interrupted} times (out of memory, a crash, or no answer within DELIVERY_WATCHDOG_MS); ` +
    'it is not mapped again. Fix the rules or plugin, then replay it';
  return destinations.filter((d) => !stored?.has(partKey(d.id, 0))).map((d) => ({
    destinationId: d.id, destinationType: d.type, part: 0, status: 'failed', item: null, reason: MAPPING_FAILED, message,
  }));
}
