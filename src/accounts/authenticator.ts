// Resolves (script id, token) to an account. Lookups are cached for one second, so
// a CLI change reaches the running server within that time without a restart, and
// an unknown id costs the same hashing work as a wrong token.
import type { Account } from './types.ts';
import type { Store } from '../store/types.ts';
import { tokenMatches } from './credentials.ts';

interface Entry {
  account: Account | null;
  hashes: string[];
  /** Earliest expiry among the tokens; the entry is stale past it. */
  validUntil: number;
}

/** Hash compared against when the script id is unknown, so both paths do equal work. */
const DUMMY_HASH = '0'.repeat(64);
const MAX_ENTRIES = 10_000;

export interface Authenticator {
  /** The account when the token is valid for it, otherwise null. */
  authenticate(scriptId: string, token: string): Promise<Account | null>;
  /** Drops the cache (tests, or after a known change). */
  invalidate(): void;
}

export function createAuthenticator(store: Store, opts: { ttlMs?: number; now?: () => number } = {}): Authenticator {
  const ttl = opts.ttlMs ?? 1000;
  const now = opts.now ?? Date.now;
  const cache = new Map<string, Entry>();
  const inflight = new Map<string, Promise<Entry>>();

  async function load(scriptId: string): Promise<Entry> {
    const t = now();
    const account = await store.accounts.get(scriptId);
    if (!account) return { account: null, hashes: [DUMMY_HASH], validUntil: t + ttl };
    const tokens = await store.accounts.activeTokens(scriptId, t);
    let validUntil = t + ttl;
    for (const tok of tokens) if (tok.expiresAt !== null && tok.expiresAt < validUntil) validUntil = tok.expiresAt;
    return { account, hashes: tokens.map((x) => x.hash), validUntil };
  }

  async function entry(scriptId: string): Promise<Entry> {
    const hit = cache.get(scriptId);
    if (hit && hit.validUntil > now()) return hit;
    let p = inflight.get(scriptId);
    if (!p) {
      p = load(scriptId).finally(() => inflight.delete(scriptId));
      inflight.set(scriptId, p);
    }
    const e = await p;
    if (cache.size >= MAX_ENTRIES) cache.clear();
    cache.set(scriptId, e);
    return e;
  }

  return {
    async authenticate(scriptId, token) {
      const e = await entry(scriptId);
      const ok = tokenMatches(token, e.hashes);
      return ok && e.account ? e.account : null;
    },
    invalidate() {
      cache.clear();
    },
  };
}
