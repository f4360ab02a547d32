// One stored event traced to the wire: the event row, then each destination's delivery
// with the native request its last attempt sent (kept with the attempt, secrets masked),
// or, where nothing was kept (no attempt yet), rebuilt from what fan-out stored, and every
// attempt the lane recorded.
import type { EventSummary, Store } from '../store/types.ts';
import type { EventRecord } from '../domain/records.ts';
import type { PluginRegistry } from '../destinations/load-plugins.ts';
import type { AttemptView, ClaimedDelivery, DeliveryView, SentRequest } from '../delivery/types.ts';
import type { DestinationRecord } from '../store/types.ts';
import type { Remap } from '../delivery/remap.ts';
import { sentRequest } from '../delivery/sent-request.ts';
import type { NormalizedEvent } from '../schema/types.ts';
import { buildRequestsFor } from '../delivery/build-requests-for.ts';
import { maskedSettings, maskRequest } from '../pipeline/mask-request.ts';
import { parseBody } from '../pipeline/preview-event.ts';

/** Response bodies shown per attempt (the store keeps more). */
const RESPONSE_SHOWN_BYTES = 2048;

/** One event with its issues in full, as its detail shows it. */
export const eventItem = (e: EventRecord) => ({
  id: e.id, script_id: e.scriptId, name: e.name, event_id: e.eventId, status: e.status, source: e.source,
  received_at: e.receivedAt, errors: e.errors, warnings: e.warnings,
});

/**
 * An event in a list: its issues counted, not listed (one event's per-product warnings can
 * run to megabytes, and a page holds up to 500), with the first error's code for the row.
 * The issues themselves come with the event's detail (`GET /admin/events/{id}`).
 */
export const eventListItem = (e: EventSummary) => ({
  id: e.id, script_id: e.scriptId, name: e.name, event_id: e.eventId, status: e.status, source: e.source,
  received_at: e.receivedAt, error_count: e.errorCount, warning_count: e.warningCount, first_error_code: e.firstErrorCode,
});

export interface TracedRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
}

/**
 * Where the body shown comes from: `sent` (kept with the attempt); `rebuilt` (a successful
 * attempt keeps its digest only: the body mapped again from the stored event, and its SHA-256
 * equals the one sent); `rebuilt_differs` (mapped again, but the rules or settings changed
 * since: not what was sent); `rebuilt_alone` (the request carried other events too: this
 * event's part only); `digest_only` (it could not be mapped again).
 */
export type BodySource = 'sent' | 'rebuilt' | 'rebuilt_differs' | 'rebuilt_alone' | 'digest_only';

/** A kept request as the trace shows it: the body parsed where it is whole JSON. */
function shownSent(r: SentRequest, source: BodySource = r.body === null ? 'digest_only' : 'sent') {
  return {
    method: r.method, url: r.url, headers: r.headers, body: r.body === null || r.bodyTruncated ? r.body : parseBody(r.body),
    body_bytes: r.bodyBytes, body_sha256: r.bodySha256, body_truncated: r.bodyTruncated, body_source: source,
  };
}

/** The delivery as a lane holds it, to build its request from `item` (or map it again: `remap`). */
const asClaimed = (d: DeliveryView, from: Pick<ClaimedDelivery, 'item' | 'remap'>): ClaimedDelivery => ({
  id: d.id, eventSeq: 0, scriptId: d.scriptId, destinationId: d.destinationId, destinationType: d.destinationType,
  eventId: d.eventId, attempts: d.attempts, receivedAt: d.receivedAt, ...from,
});

/** What a trace needs to rebuild a successful attempt's body: the fan-out's mapping. */
export interface TraceDeps {
  plugins: PluginRegistry;
  remap?: Remap;
}

/** A successful attempt's body, mapped again from the event as at the attempt, masked, with where it comes from. */
async function rebuiltBody(
  deps: TraceDeps, d: DeliveryView, dest: DestinationRecord | undefined, event: EventRecord, attempt: AttemptView, sent: SentRequest,
): Promise<ReturnType<typeof shownSent>> {
  const loaded = deps.plugins.get(d.destinationType);
  if (deps.remap === undefined || loaded === undefined || dest === undefined || d.part === null || event.status !== 'accepted') return shownSent(sent);
  const claimed = asClaimed(d, { item: null, remap: { event: event.payload as NormalizedEvent, part: d.part, eventKey: event.eventId ?? event.id } });
  await deps.remap(dest, [claimed], attempt.attemptedAt);
  if (claimed.item === null) return shownSent(sent);
  const { units } = buildRequestsFor(loaded.plugin, d.destinationType, dest.settings, [claimed], attempt.attemptedAt);
  if (units.length === 0) return shownSent(sent);
  const again = sentRequest(units[0].request, loaded.plugin, dest.settings);
  const source: BodySource = attempt.events > 1 ? 'rebuilt_alone' : again.bodySha256 === sent.bodySha256 ? 'rebuilt' : 'rebuilt_differs';
  return shownSent({ ...sent, body: again.body, bodyTruncated: again.bodyTruncated }, source);
}

/** The request that carries this delivery, as the lane builds it (the send time is now). */
function rebuild(plugins: PluginRegistry, d: DeliveryView, settings: Record<string, unknown> | null, event: EventRecord): TracedRequest[] | null {
  const loaded = plugins.get(d.destinationType);
  if (!loaded || d.item === null || settings === null || event.status !== 'accepted') return null;
  const claimed = asClaimed(d, { item: { ...d.item, event: event.payload as NormalizedEvent } });
  const { units } = buildRequestsFor(loaded.plugin, d.destinationType, maskedSettings(loaded.plugin, settings), [claimed], Date.now());
  return units.map((u) => {
    const m = maskRequest(u.request, loaded.plugin);
    return { method: m.method, url: m.url, headers: m.headers, body: parseBody(m.body) };
  });
}

export async function traceEvent(store: Store, deps: TraceDeps, event: EventRecord) {
  const { plugins } = deps;
  // This event row's deliveries (another event may reuse its event.id, e.g. the order's cancellation).
  const mine = event.status !== 'accepted' ? [] : (await store.deliveries.list({ eventRowId: event.id, limit: 500 })).sort((a, b) => a.id - b.id);
  const destinations = new Map((await store.destinations.list(event.scriptId)).map((d) => [d.id, d]));
  const deliveries = await Promise.all(mine.map(async (d) => {
    const dest = destinations.get(d.destinationId);
    const attempts = await store.deliveries.attempts(d.id);
    const lastAttempt = [...attempts].reverse().find((a) => a.request !== null);
    const lastSent = lastAttempt?.request ?? null;
    const request = lastSent === null ? rebuild(plugins, d, dest?.settings ?? null, event)
      : [lastSent.body !== null ? shownSent(lastSent) : await rebuiltBody(deps, d, dest, event, lastAttempt!, lastSent)];
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
