// An event's payload as the events table keeps it: deflated against a preset dictionary of
// the JSON a normalised payload is made of (payload-dictionary.ts), about a quarter of its
// text (the 1.2 KB checkout of the benches: 0.28 KB). The payload_packed column holds it with a
// leading format byte; a payload too short to gain, or stored before the packed form
// existed, stays in the payload column as JSON text with payload_packed NULL.
// Both stores, and every reader of an event row, go through here (event-rows.ts).
// Loaded in the SQLite commit thread (sqlite/writer-thread.ts): no top-level await.
import { deflateRawSync, inflateRawSync, type ZlibOptions } from 'node:zlib';
import { PAYLOAD_DICTIONARY_1 } from './payload-dictionary.ts';

/** The format byte of deflate-raw against PAYLOAD_DICTIONARY_1 with a 4 KiB window. */
const FORMAT_1 = 1;

/**
 * A 4 KiB window holds the dictionary (1.5 KiB) and most payloads whole, and costs less to
 * set up per call than the default 32 KiB (a third fewer instructions); memLevel 4 likewise.
 * The window is part of the format: inflate must use one at least as large.
 */
const DEFLATE_1: ZlibOptions = { dictionary: PAYLOAD_DICTIONARY_1, windowBits: 12, memLevel: 4, level: 6 };
const INFLATE_1: ZlibOptions = { dictionary: PAYLOAD_DICTIONARY_1, windowBits: 12 };

/** Shorter payloads (a rejected request's `null`, tiny bodies) stay text: deflating them gains a few bytes at most. */
export const PACK_MIN_CHARS = 64;

/** The columns an events row stores a payload in. */
export interface StoredPayload {
  /** The JSON text, or '' when `packed` holds it. */
  payload: string;
  packed: Buffer | null;
}

/** `json` (a payload's JSON text) as the events table stores it. */
export function packPayload(json: string): StoredPayload {
  if (json.length < PACK_MIN_CHARS) return { payload: json, packed: null };
  const deflated = deflateRawSync(json, DEFLATE_1);
  if (deflated.length + 1 >= json.length) return { payload: json, packed: null };
  const packed = Buffer.allocUnsafe(deflated.length + 1);
  packed[0] = FORMAT_1;
  deflated.copy(packed, 1);
  return { payload: '', packed };
}

/** The JSON text of a stored payload, whichever form it was stored in. */
export function payloadJson(r: { payload: string; payload_packed: Uint8Array | null }): string {
  const packed = r.payload_packed;
  if (packed === null || packed === undefined) return r.payload;
  if (packed[0] !== FORMAT_1) throw new Error(`stored payload of format ${packed[0]}, which this build cannot read (a newer one wrote it)`);
  return inflateRawSync(packed.subarray(1), INFLATE_1).toString('utf8');
}
