// A bytea[] query parameter in PostgreSQL's binary array format. node-postgres sends a Buffer
// parameter as binary, as it is; an array of Buffers it would turn into a text literal, every
// element hex-encoded (twice its size) for the server to parse and decode again. Built here,
// the array reaches the server as one Buffer that array_recv reads element by element with a
// copy each: nothing is encoded or decoded on either side. The statement must cast the
// parameter (`$n::bytea[]`) so the server reads it as that type.

/** PostgreSQL's type OID of bytea, the element type the binary array names. */
const BYTEA_OID = 17;

/** `items` (null: an SQL NULL element) as one binary bytea[] parameter, subscripts from 1. */
export function byteaArrayParam(items: readonly (Uint8Array | null)[]): Buffer {
  let size = 20;
  for (const b of items) size += 4 + (b?.length ?? 0);
  const out = Buffer.allocUnsafe(size);
  // Header: dimensions, whether any element is NULL, element type, then the one dimension's length and lower bound.
  out.writeInt32BE(1, 0);
  out.writeInt32BE(items.includes(null) ? 1 : 0, 4);
  out.writeInt32BE(BYTEA_OID, 8);
  out.writeInt32BE(items.length, 12);
  out.writeInt32BE(1, 16);
  let at = 20;
  for (const b of items) {
    if (b === null) {
      at = out.writeInt32BE(-1, at);
      continue;
    }
    at = out.writeInt32BE(b.length, at);
    out.set(b, at);
    at += b.length;
  }
  return out;
}
