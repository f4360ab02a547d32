// Keeps a custom endpoint's env=test answer small, as endpoint 2's is: a handler may produce
// up to 1,000 events from one request, and each previewed event carries its payload, its
// normalised form and every destination's requests (1,000 of them made a 116 KB request
// answer 1.66 MB, all planned on the HTTP thread). So only the first TEST_PREVIEW_EVENTS
// events are previewed (the rest are validated, as in production, and counted), and the
// answer is held to endpoint 2's 1 MiB, each previewed event elided the way endpoint 2
// elides its one event (src/http/bound-response.ts), then records and messages.
import { boundTestResponse, TEST_RESPONSE_MAX_BYTES } from '../http/bound-response.ts';
import type { CustomRecord } from './types.ts';

/** How many produced events env=test previews (validation, funnel and duplicate checks, per-destination requests). */
export const TEST_PREVIEW_EVENTS = 20;
/** Messages kept when the answer must shrink: the handler's own first, then the rejections. */
const MESSAGES_KEEP = 100;

/** One previewed event as env=test reports it (process-request.ts). */
export interface PreviewedEvent extends Record<string, unknown> {
  payload: unknown;
  data_normalized: unknown;
  preview: { requests?: { body?: unknown; raw_body?: string }[] }[];
  warnings: string[];
}

export interface TestAnswer {
  result: 'ok';
  messages: string[];
  custom_data: Record<string, unknown> & { events: PreviewedEvent[]; records?: CustomRecord[] | string };
}

const size = (v: unknown): number => Buffer.byteLength(JSON.stringify(v));
export const TRUNCATED_MESSAGE = (maxBytes: number): string =>
  `RESPONSE_TRUNCATED: the answer would have exceeded ${maxBytes} bytes; parts were elided (marked "[elided: …]"); each event's status, errors and warnings and each destination's status, URL and headers are complete`;

/** `answer` itself when it fits in `maxBytes`, else a copy with parts elided (see above) and a RESPONSE_TRUNCATED message. */
export function boundTestAnswer<T extends TestAnswer>(answer: T, maxBytes = TEST_RESPONSE_MAX_BYTES): T {
  if (size(answer) <= maxBytes) return answer;
  const events = answer.custom_data.events;
  const rest = size({ ...answer, custom_data: { ...answer.custom_data, events: [] } });
  // Each event gets an equal share of what the rest leaves, elided as endpoint 2 elides its
  // event: parsed preview bodies, the payload, long raw bodies, the normalised event.
  const share = Math.max(0, Math.floor((maxBytes - rest) / Math.max(1, events.length)));
  const out: T = {
    ...answer,
    messages: [...answer.messages, TRUNCATED_MESSAGE(maxBytes)],
    custom_data: { ...answer.custom_data, events: events.map((e) => boundEvent(e, share)) },
  };
  if (size(out) <= maxBytes) return out;
  const { records } = out.custom_data;
  if (Array.isArray(records) && records.length > 0) {
    out.custom_data.records = `[elided: ${records.length} records, ${size(records)} bytes; the test answer is limited to ${maxBytes} bytes]`;
  }
  if (size(out) > maxBytes && out.messages.length > MESSAGES_KEEP + 1) {
    const cut = out.messages.length - 1 - MESSAGES_KEEP;
    out.messages = [...out.messages.slice(0, MESSAGES_KEEP), `[elided: ${cut} more messages]`, TRUNCATED_MESSAGE(maxBytes)];
  }
  return out;
}

function boundEvent(e: PreviewedEvent, maxBytes: number): PreviewedEvent {
  const view = { data_received: e.payload, data_normalized: e.data_normalized, preview: e.preview, warnings: e.warnings };
  const bounded = boundTestResponse(view, maxBytes);
  if (bounded === view) return e;
  // Its own RESPONSE_TRUNCATED warning names the share, not the answer's limit: the answer says it once, in messages.
  return { ...e, payload: bounded.data_received, data_normalized: bounded.data_normalized, preview: bounded.preview as PreviewedEvent['preview'] };
}
