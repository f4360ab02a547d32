// Script ids and access tokens. Tokens carry a recognisable prefix so secret
// scanners find leaked ones, hold 192 random bits, and are stored only as SHA-256.
import { createHash, hash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

export const TOKEN_PREFIX = 'tlk_';
const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
export const SCRIPT_ID_RE = /^[A-Z0-9]{8}$/;

/** 8 characters of [A-Z0-9] from the CSPRNG (~41 bits). */
export function newScriptId(): string {
  let s = '';
  for (let i = 0; i < 8; i++) s += ID_ALPHABET[randomInt(ID_ALPHABET.length)];
  return s;
}

/** A new access token: `tlk_` + 32 base64url characters (192 bits). */
export function newAccessToken(): string {
  return TOKEN_PREFIX + randomBytes(24).toString('base64url');
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** The part of a token safe to show in listings. */
export function tokenDisplayPrefix(token: string): string {
  return token.slice(0, TOKEN_PREFIX.length + 4);
}

/**
 * Compares a presented token with stored hashes in constant time: both sides are
 * 32-byte digests, so odd lengths never throw. Checks every candidate (no early exit).
 */
export function tokenMatches(presented: string, storedHashes: readonly string[]): boolean {
  return digestMatches(presented, storedDigests(storedHashes));
}

/** Stored hex hashes as the bytes digestMatches compares: decoded once for a cached list, not per request. */
export function storedDigests(storedHashes: readonly string[]): Buffer[] {
  return storedHashes.map((h) => Buffer.from(h, 'hex'));
}

/** tokenMatches against hashes already decoded (storedDigests), in the same constant time. */
export function digestMatches(presented: string, stored: readonly Buffer[]): boolean {
  const digest = hash('sha256', presented, 'buffer');
  let ok = false;
  for (const s of stored) {
    if (s.length === digest.length && timingSafeEqual(s, digest)) ok = true;
  }
  return ok;
}
