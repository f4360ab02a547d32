// Resolves (script id, token) to an account. Lookups are cached for one second, so
// a CLI change reaches the running server within that time without a restart. An
// unknown id costs the same work as a wrong token: the same read (account and active
// tokens, store.accounts.credentials) and the same hash comparison. The cache is least-recently-used and
// keeps unknown ids apart (a small LRU of their own), so spraying random script ids
// evicts other unknown ids, never a real account's entry.
import type { Account } from './types.ts';
import type { Store } from '../store/types.ts';
import { digestMatches, storedDigests } from './credentials.ts';

interface Entry {
  account: Account | null;
  /** The active tokens' SHA-256 digests, decoded once for the entry's life. */
  digests: Buffer[];
  /** Earliest expiry among the tokens; the entry is stale past it. */
  validUntil: number;
}

/** Hash compared against when the script id is unknown, so both paths do equal work. */
const DUMMY_DIGESTS = storedDigests(['0'.repeat(64)]);
const MAX_ENTRIES = 10_000;
const MAX_UNKNOWN_ENTRIES = 1_000;

/** A Map used as an LRU: a hit moves to the end, inserts past `max` drop the oldest. */
function lru<V>(max: number) {
  const map = new Map<string, V>();
  return {
    get(k: string): V | undefined {
      const v = map.get(k);
      if (v !== undefined) {
        map.delete(k);
        map.set(k, v);
      }
      return v;
    },
    set(k: string, v: V): void {
      map.delete(k);
      map.set(k, v);
      while (map.size > max) map.delete(map.keys().next().value!);
    },
    delete: (k: string) => map.delete(k),
    clear: () => map.clear(),
    get size() {
      return map.size;
    },
  };
}

export interface Authenticator {
  /** The account when the token is valid for it, otherwise null. */
  authenticate(scriptId: string, token: string): Promise<Account | null>;
  /** Whether `scriptId` is a real account in the cache right now (no database work). */
  isCachedAccount(scriptId: string): boolean;
  /** Drops the cache (tests, or after a known change). */
  invalidate(): void;
}

export function createAuthenticator(store: Store, opts: { ttlMs?: number; now?: () => number; maxEntries?: number } = {}): Authenticator {
  const ttl = opts.ttlMs ?? 1000;
  const now = opts.now ?? Date.now;
  const known = lru<Entry>(opts.maxEntries ?? MAX_ENTRIES);
  const unknown = lru<Entry>(MAX_UNKNOWN_ENTRIES);
  const inflight = new Map<string, Promise<Entry>>();

  async function load(scriptId: string): Promise<Entry> {
    const t = now();
    // Both reads run whether or not the account exists (equal work for unknown ids), within
    // intake's lock limits: a locked accounts table fails the check (503), it never holds it.
    const { account, tokens } = await store.accounts.credentials(scriptId, t);
    if (!account) return { account: null, digests: DUMMY_DIGESTS, validUntil: t + ttl };
    let validUntil = t + ttl;
    for (const tok of tokens) if (tok.expiresAt !== null && tok.expiresAt < validUntil) validUntil = tok.expiresAt;
    return { account, digests: storedDigests(tokens.map((x) => x.hash)), validUntil };
  }

  async function entry(scriptId: string): Promise<Entry> {
    const hit = known.get(scriptId) ?? unknown.get(scriptId);
    if (hit && hit.validUntil > now()) return hit;
    let p = inflight.get(scriptId);
    if (!p) {
      p = load(scriptId).finally(() => inflight.delete(scriptId));
      inflight.set(scriptId, p);
    }
    const e = await p;
    if (e.account) {
      known.set(scriptId, e);
      unknown.delete(scriptId);
    } else {
      unknown.set(scriptId, e);
      known.delete(scriptId);
    }
    return e;
  }

  return {
    async authenticate(scriptId, token) {
      const e = await entry(scriptId);
      const ok = digestMatches(token, e.digests);
      return ok && e.account ? e.account : null;
    },
    isCachedAccount(scriptId) {
      const e = known.get(scriptId);
      return e !== undefined && e.validUntil > now();
    },
    invalidate() {
      known.clear();
      unknown.clear();
    },
  };
}
