// SHA-256 as every destination wants it: UTF-8 in, 64 lowercase hex characters out.
import { hash } from 'node:crypto';

const SHA256_HEX = /^[0-9a-f]{64}$/i;

/** `sha256Hex('abc')` → `'ba7816bf…15ad'`. */
export function sha256Hex(s: string): string {
  return hash('sha256', s, 'hex'); // strings are hashed as UTF-8
}

/** True for a value that already is a SHA-256 hex digest (either case), surrounding spaces allowed. */
export function isSha256Hex(s: string): boolean {
  return SHA256_HEX.test(s.trim());
}
