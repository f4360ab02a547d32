// One stored event traced to the wire: the event row, then each destination's delivery
// with the native request its last attempt sent (kept with the attempt, secrets masked),
// or, where nothing was kept (no attempt yet), rebuilt from what fan-out stored, and every
// attempt the lane recorded.
import type { Store } from '../store/types.ts';
import type { EventRecord } from '../domain/records.ts';
import type { PluginRegistry } from '../destinations/load-plugins.ts';
import type { DeliveryView, SentRequest } from '../delivery/types.ts';
import type { NormalizedEvent } from '../schema/types.ts';
import { buildRequestsFor } from '../delivery/build-requests-for.ts';
import { maskedSettings, maskRequest } from '../pipeline/mask-request.ts';
import { parseBody } from '../pipeline/preview-event.ts';

/** Response bodies shown per attempt (the store keeps more). */
const RESPONSE_SHOWN_BYTES = 2048;

export const eventItem = (e: EventRecord) => ({
  id: e.id, script_id: e.scriptId, name: e.name, event_id: e.eventId, status: e.status, source: e.source,
  received_at: e.receivedAt, errors: e.errors, warnings: e.warnings,
});

export interface TracedRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
}

/** A kept request as the trace shows it: the body parsed where it is whole JSON. */
function shownSent(r: SentRequest) {
  return {
    method: r.method, url: r.url, headers: r.headers, body: r.bodyTruncated ? r.body : parseBody(r.body),
    body_bytes: r.bodyBytes, body_sha256: r.bodySha256, body_truncated: r.bodyTruncated,
  };
}

/** The request that carries this delivery, as the lane builds it (the send time is now). */
function rebuild(plugins: PluginRegistry, d: DeliveryView, settings: Record<string, unknown> | null, event: EventRecord): TracedRequest[] | null {
  const loaded = plugins.get(d.destinationType);
  if (!loaded || d.item === null || settings === null || event.status !== 'accepted') return null;
  const claimed = {
    id: d.id, eventSeq: 0, scriptId: d.scriptId, destinationId: d.destinationId, destinationType: d.destinationType,
    eventId: d.eventId, attempts: d.attempts, receivedAt: d.receivedAt,
    item: { ...d.item, event: event.payload as NormalizedEvent },
  };
  const { units } = buildRequestsFor(loaded.plugin, d.destinationType, maskedSettings(loaded.plugin, settings), [claimed], Date.now());
  return units.map((u) => {
    const m = maskRequest(u.request, loaded.plugin);
    return { method: m.method, url: m.url, headers: m.headers, body: parseBody(m.body) };
  });
}

export async function traceEvent(store: Store, plugins: PluginRegistry, event: EventRecord) {
  // This event row's deliveries (another event may reuse its event.id, e.g. the order's cancellation).
  const mine = event.status !== 'accepted' ? [] : (await store.deliveries.list({ eventRowId: event.id, limit: 500 })).sort((a, b) => a.id - b.id);
  const destinations = new Map((await store.destinations.list(event.scriptId)).map((d) => [d.id, d]));
  const deliveries = await Promise.all(mine.map(async (d) => {
    const dest = destinations.get(d.destinationId);
    const attempts = await store.deliveries.attempts(d.id);
    const lastSent = [...attempts].reverse().find((a) => a.request !== null)?.request ?? null;
    const request = lastSent !== null ? [shownSent(lastSent)] : rebuild(plugins, d, dest?.settings ?? null, event);
    return {
      id: d.id,
      destination_id: d.destinationId,
      destination_type: d.destinationType,
      destination_name: dest?.name ?? null,
      destination_enabled: dest?.enabled ?? null,
      status: d.status,
      skip_reason: d.skipReason,
      attempts: d.attempts,
      next_attempt_at: d.nextAttemptAt,
      last_status_code: d.lastStatusCode,
      last_error: d.lastError,
      updated_at: d.updatedAt,
      delivered_at: d.deliveredAt,
      paused: d.paused,
      request,
      request_source: lastSent !== null ? 'sent' : request === null ? null : 'rebuilt',
      attempt_log: attempts.map((a, i) => ({
        attempt: i + 1,
        at: a.attemptedAt,
        status_code: a.statusCode,
        latency_ms: a.latencyMs,
        outcome: a.outcome,
        error: a.message ?? a.errorClass,
        response: a.responseBody === null ? null : a.responseBody.slice(0, RESPONSE_SHOWN_BYTES),
        request: a.request === null ? null : shownSent(a.request),
      })),
    };
  }));
  return { event: { ...eventItem(event), payload: event.payload }, deliveries };
}
