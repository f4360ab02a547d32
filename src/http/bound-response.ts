// Keeps the test endpoint's answer bounded: a large request with several destinations
// would otherwise be answered with many times its own size (every preview carries its
// body twice, parsed and raw, and the answer echoes the request). Past the limit, parts
// are elided in order of least use, each replaced by a marker saying what was there:
//   1. each preview request's parsed `body` (its `raw_body` has the same bytes);
//   2. `data_received` (the client has it);
//   3. each `raw_body` beyond its first 8 KiB;
//   4. `data_normalized`.
// Errors, warnings and each destination's status, URL and headers are always kept.

export const TEST_RESPONSE_MAX_BYTES = 1024 * 1024;
const RAW_BODY_KEEP = 8 * 1024;

interface PreviewLike { requests?: { body?: unknown; raw_body?: string }[] }
type TestBody = Record<string, unknown> & { preview?: PreviewLike[]; warnings?: string[] };

const size = (v: unknown): number => Buffer.byteLength(JSON.stringify(v));
const marker = (what: string, bytes: number) => `[elided: ${what}, ${bytes} bytes; the test answer is limited to ${TEST_RESPONSE_MAX_BYTES} bytes]`;

/**
 * The answer as the JSON text sent: serialised once (the size check and the response share
 * it), elided as boundTestResponse says when it does not fit.
 */
export function boundTestResponseText(body: TestBody, maxBytes = TEST_RESPONSE_MAX_BYTES): string {
  const text = JSON.stringify(body);
  if (text.length * 3 <= maxBytes || Buffer.byteLength(text) <= maxBytes) return text;
  return JSON.stringify(boundTestResponse(body, maxBytes));
}

/** Returns `body` itself when it fits in `maxBytes`, else a copy with parts elided (see above). */
export function boundTestResponse<T extends TestBody>(body: T, maxBytes = TEST_RESPONSE_MAX_BYTES): T {
  if (size(body) <= maxBytes) return body;
  const out = structuredClone(body) as TestBody;
  const requests = () => (out.preview ?? []).flatMap((p) => p.requests ?? []);
  const steps: (() => void)[] = [
    () => { for (const r of requests()) if (r.body !== undefined) r.body = marker('parsed body, the same as raw_body', size(r.body)); },
    () => { if (out.data_received !== undefined) out.data_received = marker('the body as received', size(out.data_received)); },
    () => {
      for (const r of requests()) {
        if (typeof r.raw_body === 'string' && r.raw_body.length > RAW_BODY_KEEP) {
          r.raw_body = `${r.raw_body.slice(0, RAW_BODY_KEEP)}${marker('rest of raw_body', Buffer.byteLength(r.raw_body.slice(RAW_BODY_KEEP)))}`;
        }
      }
    },
    () => { if (out.data_normalized !== undefined) out.data_normalized = marker('the normalised event', size(out.data_normalized)); },
  ];
  for (const step of steps) {
    step();
    if (size(out) <= maxBytes) break;
  }
  if (out.level === 0) out.level = 1; // it now carries a warning
  out.warnings = [...(out.warnings ?? []),
    `RESPONSE_TRUNCATED: the answer would have exceeded ${maxBytes} bytes; parts were elided (marked "[elided: …]"), errors, warnings and each destination's status, URL and headers are complete`];
  return out as T;
}
