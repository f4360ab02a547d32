// A request's body as UTF-8 bytes, encoded once per request object: the sender hands undici
// these bytes (a string body would be encoded by undici again), and the attempt's record
// takes the body's size and SHA-256 from the same bytes, instead of encoding the text twice more.
import type { OutboundRequest } from '../../destinations/types.ts';

const encoded = new WeakMap<Pick<OutboundRequest, 'body'>, Buffer>();

/** `req.body` as UTF-8, the same Buffer for every call on the same request object (read it, never write to it). */
export function bodyBytes(req: Pick<OutboundRequest, 'body'>): Buffer {
  let bytes = encoded.get(req);
  if (bytes === undefined) encoded.set(req, (bytes = Buffer.from(req.body, 'utf8')));
  return bytes;
}
