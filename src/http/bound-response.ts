// Keeps the test endpoint's answer bounded: a large request with several destinations
// would otherwise be answered with many times its own size (every preview carries its
// body twice, parsed and raw, and the answer echoes the request). Past the limit, parts
// are elided in order of least use, each replaced by a marker saying what was there:
//   1. each preview request's parsed `body` (its `raw_body` has the same bytes);
//   2. `data_received` (the client has it);
//   3. each `raw_body` beyond its first 8 KiB;
//   4. `data_normalized`.
// Errors, warnings and each destination's status, URL and headers are always kept.

import { randomBytes } from 'node:crypto';

export const TEST_RESPONSE_MAX_BYTES = 1024 * 1024;
const RAW_BODY_KEEP = 8 * 1024;

interface RequestLike { body?: unknown; raw_body?: string }
interface PreviewLike { requests?: RequestLike[] }
type TestBody = Record<string, unknown> & { preview?: PreviewLike[]; warnings?: string[] };

const size = (v: unknown): number => Buffer.byteLength(JSON.stringify(v));
const marker = (what: string, bytes: number) => `[elided: ${what}, ${bytes} bytes; the test answer is limited to ${TEST_RESPONSE_MAX_BYTES} bytes]`;
const fits = (text: string, maxBytes: number): boolean => text.length * 3 <= maxBytes || Buffer.byteLength(text) <= maxBytes;

/**
 * The answer as the JSON text sent: serialised once (the size check and the response share
 * it), elided as boundTestResponse says when it does not fit. `receivedText`: the request
 * body's text, which `data_received` was parsed from; it is written as received (see
 * withRawTexts).
 */
export function boundTestResponseText(body: TestBody, maxBytes = TEST_RESPONSE_MAX_BYTES, receivedText?: string): string {
  const text = withRawTexts(body, receivedText) ?? JSON.stringify(body);
  if (fits(text, maxBytes)) return text;
  return JSON.stringify(boundTestResponse(body, maxBytes));
}

/**
 * Marks where a raw text goes while the answer is serialised (`<SLOT><index>`). Random per
 * process, so no text a client or a plugin puts in the answer can be taken for one.
 */
const SLOT = `\u0000raw:${randomBytes(12).toString('hex')}:`;
const QUOTED_SLOTS = new RegExp(`${JSON.stringify(SLOT).slice(0, -1).replace(/\\/g, '\\\\')}(\\d+)"`, 'g');

/** The marker of a raw text, kept in `raws` (module functions, not closures made per answer). */
const slot = (raws: string[], text: string): string => `${SLOT}${raws.push(text) - 1}`;
/** A preview request whose parsed body is to be written as its raw text: its body a slot. */
const swap = (raws: string[], r: RequestLike): RequestLike =>
  typeof r.raw_body !== 'string' || r.body === null || typeof r.body !== 'object' ? r : { ...r, body: slot(raws, r.raw_body) };

/**
 * `body` serialised with JSON values whose text is at hand written as that text, instead of
 * serialising their parsed copies again (parsing and re-serialising them was about a tenth of
 * endpoint 2's work): each preview request's parsed `body` as its `raw_body`, the very text
 * it was parsed from (for the plugins' compact JSON, the same bytes), and `data_received` as
 * `receivedText`, the request body as it arrived (the same value; its own spacing and
 * number spelling). A preview body that is not a parsed object or array (text that was not
 * JSON, or a marker) is serialised as usual. Null when there is nothing to write raw.
 */
function withRawTexts(body: TestBody, receivedText?: string): string | null {
  const raws: string[] = [];
  const copy: TestBody = { ...body };
  if (receivedText !== undefined && body.data_received !== null && typeof body.data_received === 'object') copy.data_received = slot(raws, receivedText.trim());
  if (body.preview !== undefined) {
    copy.preview = body.preview.map((p) => (p.requests === undefined ? p : { ...p, requests: p.requests.map((r) => swap(raws, r)) }));
  }
  if (raws.length === 0) return null;
  let seen = 0;
  const text = JSON.stringify(copy).replace(QUOTED_SLOTS, (_, i: string) => {
    seen++;
    return raws[Number(i)];
  });
  return seen === raws.length ? text : null;
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
