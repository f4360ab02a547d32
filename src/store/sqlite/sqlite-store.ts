// SQLite implementation of the Store: WAL, synchronous=FULL (an acknowledged event
// survives power loss), busy timeout, and BEGIN IMMEDIATE for every write transaction.
// Event appends run either on this connection or, with `writerThread`, on a writer thread
// with its own connection (writer-thread.ts); both run append-events.ts.
import type { Account, AccountPatch, NewAccount, TokenRecord } from '../../domain/accounts.ts';
import type { AccountStore, DedupEnvironment, EventFilter, EventRecord, EventStatus, EventStore, Store } from '../types.ts';
import { createAppender } from './append-events.ts';
import { DEFAULT_DEDUP_WINDOW_MS, prepareRow, type PreparedRow } from '../prepare-row.ts';
import { DEFAULT_BUSY_TIMEOUT_MS, openConnection } from './connection.ts';
import { migrate } from './migrations.ts';
import { startWriterThread } from './writer-thread.ts';
import { startWalCheckpoints, walBytes, type WalBound } from './wal-checkpoints.ts';
import { makeStorePrivate, type ModeChange } from './private-files.ts';
import { sqliteDestinationStore } from './destination-store.ts';
import { sqliteDeliveryStore } from './delivery-store.ts';
import { sqliteRuleVersionStore } from './rule-version-store.ts';
import { eventFilterSql } from '../event-filter.ts';
import { pinMap } from '../pin-map.ts';
import { eventSummaryColumns, toEventSummary, toListedEvent, type EventSummaryRow, type SeqEventRow } from '../event-rows.ts';

/** An event listing's columns, the issues counted by SQLite's JSON functions. */
const SQLITE_SUMMARY = eventSummaryColumns({ length: (c) => `json_array_length(${c})`, firstCode: (c) => `json_extract(${c}, '$[0].code')` });

export interface SqliteOptions {
  /** File path, or ':memory:' */
  file: string;
  /** Milliseconds a writer waits for a lock before SQLITE_BUSY. */
  busyTimeoutMs?: number;
  /** Busy timeout of the main-thread connection when it differs (the server's is short). */
  mainBusyTimeoutMs?: number;
  /** How long an (account, name, event id) counts as a duplicate; default 7 days. */
  dedupWindowMs?: number;
  /**
   * Commit event appends on a writer thread with its own connection instead of blocking
   * this thread during insert + fsync. Ignored for ':memory:'. Default: TRACKLANE_WRITER_THREAD
   * (1 or 0) when set, else DEFAULT_WRITER_THREAD.
   */
  writerThread?: boolean;
  /** The WAL's size bound and how often it is checked (wal-checkpoints.ts); defaults there. */
  wal?: WalBound;
  /** Told, before the store opens, what of its folder and files was readable by others and tightened (private-files.ts). */
  onModesTightened?: (changes: ModeChange[]) => void;
}

/**
 * On, by measurement: `npm run bench` (2 cores shared with autocannon), 9 alternating runs
 * per variant, endpoint 1 median 4052 req/s and p99 22 ms with the thread against 3588 req/s
 * and p99 31 ms in-process. In-process, the main thread spent about 16 % of the run inside
 * append transactions (commit fsync and WAL checkpoints), with a p99 of 11 ms per batch.
 * The thread starts on the first append, so processes that never append (the CLI) never
 * start it.
 */
export const DEFAULT_WRITER_THREAD = true;

/** The default of SqliteOptions.writerThread: TRACKLANE_WRITER_THREAD when set, else DEFAULT_WRITER_THREAD. */
export function defaultWriterThread(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env.TRACKLANE_WRITER_THREAD;
  if (v === undefined || v === '') return DEFAULT_WRITER_THREAD;
  if (v === '1') return true;
  if (v === '0') return false;
  throw new Error(`TRACKLANE_WRITER_THREAD must be 1 or 0, got "${v}"`);
}

interface AccountRow {
  script_id: string; name: string; tier: Account['tier']; addon: number; enabled: number;
  host: string | null; country: string | null; tax_rate: number | null; extra_events: string;
  customer: string | null; rate_limit: number | null; endpoint_pins: string; consent_default: Account['consentDefault']; created_at: number; updated_at: number;
}
interface TokenRow { id: number; script_id: string; hash: string; prefix: string; created_at: number; expires_at: number | null }

const toAccount = (r: AccountRow): Account => ({
  scriptId: r.script_id,
  name: r.name,
  tier: r.tier,
  addon: r.addon === 1,
  enabled: r.enabled === 1,
  host: r.host,
  country: r.country,
  taxRate: r.tax_rate,
  extraEvents: JSON.parse(r.extra_events) as string[],
  customer: r.customer,
  rateLimit: r.rate_limit,
  endpointPins: pinMap(r.endpoint_pins),
  consentDefault: r.consent_default,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const toToken = (r: TokenRow): TokenRecord => ({
  id: r.id, scriptId: r.script_id, hash: r.hash, prefix: r.prefix, createdAt: r.created_at, expiresAt: r.expires_at,
});


/** Column names of AccountPatch keys. */
const PATCH_COLUMNS: Record<keyof AccountPatch, string> = {
  name: 'name', tier: 'tier', addon: 'addon', enabled: 'enabled', host: 'host', country: 'country',
  taxRate: 'tax_rate', extraEvents: 'extra_events', customer: 'customer', rateLimit: 'rate_limit', endpointPins: 'endpoint_pins',
  consentDefault: 'consent_default',
};

function patchValue(key: keyof AccountPatch, v: unknown): unknown {
  if (key === 'addon' || key === 'enabled') return v ? 1 : 0;
  if (key === 'extraEvents' || key === 'endpointPins') return JSON.stringify(v);
  return v;
}

export function openSqliteStore(opts: SqliteOptions): Store {
  const busyTimeoutMs = opts.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  const dedupWindow = opts.dedupWindowMs ?? DEFAULT_DEDUP_WINDOW_MS;
  if (opts.file !== ':memory:') {
    // Here rather than in openConnection alone, so what was tightened is reported once, by the first opener.
    const changes = makeStorePrivate(opts.file);
    if (changes.length > 0) opts.onModesTightened?.(changes);
  }
  const db = openConnection(opts.file, opts.mainBusyTimeoutMs ?? busyTimeoutMs, opts.wal?.limitBytes);
  migrate(db);
  // After migrate: the thread's connection only ever sees the current schema.
  const writer = (opts.writerThread ?? defaultWriterThread()) && opts.file !== ':memory:'
    ? startWriterThread({ file: opts.file, busyTimeoutMs, dedupWindowMs: dedupWindow, wal: opts.wal })
    : undefined;
  // The writer thread bounds the WAL once it runs; without one, this connection does.
  const stopCheckpoints = writer ? () => undefined : startWalCheckpoints(db, opts.file, opts.wal);
  const appendEvents: (rows: readonly PreparedRow[]) => EventStatus[] | Promise<EventStatus[]> = writer
    ? (rows) => writer.append(rows)
    : createAppender(db, dedupWindow);

  const q = {
    insertAccount: db.prepare(`INSERT INTO accounts (script_id, name, tier, addon, enabled, host, country, tax_rate, extra_events, customer, created_at, updated_at)
      VALUES (@script_id, @name, @tier, @addon, 1, @host, @country, @tax_rate, '[]', NULL, @now, @now)`),
    getAccount: db.prepare<[string], AccountRow>('SELECT * FROM accounts WHERE script_id = ?'),
    listAccounts: db.prepare<[], AccountRow>('SELECT * FROM accounts ORDER BY created_at, script_id'),
    insertToken: db.prepare('INSERT INTO access_tokens (script_id, hash, prefix, created_at, expires_at) VALUES (?, ?, ?, ?, NULL)'),

    activeTokens: db.prepare<[string, number], TokenRow>(
      'SELECT * FROM access_tokens WHERE script_id = ? AND (expires_at IS NULL OR expires_at > ?) ORDER BY id DESC'),
    ping: db.prepare('SELECT 1'),
  };

  const createTx = db.transaction((a: NewAccount, hash: string, prefix: string, now: number) => {
    q.insertAccount.run({ script_id: a.scriptId, name: a.name, tier: a.tier, addon: a.addon ? 1 : 0, host: a.host, country: a.country, tax_rate: a.taxRate, now });
    q.insertToken.run(a.scriptId, hash, prefix, now);
  });
  const rotateTx = db.transaction((scriptId: string, hash: string, prefix: string, now: number, oldExpiresAt: number) => {
    // Tokens already expiring sooner keep their earlier expiry.
    db.prepare('UPDATE access_tokens SET expires_at = MIN(COALESCE(expires_at, ?), ?) WHERE script_id = ? AND (expires_at IS NULL OR expires_at > ?)')
      .run(oldExpiresAt, oldExpiresAt, scriptId, now);
    q.insertToken.run(scriptId, hash, prefix, now);
  });
  // One read transaction: the account and its tokens as of the same commit.
  const readCredentials = db.transaction((scriptId: string, now: number) => {
    const r = q.getAccount.get(scriptId);
    return { account: r ? toAccount(r) : null, tokens: q.activeTokens.all(scriptId, now).map(toToken) };
  });
  const isSeen = db.prepare<[string, string], { n: number }>('SELECT 1 AS n FROM seen_products WHERE script_id = ? AND product_id = ?');
  const getDedup = db.prepare<[string, DedupEnvironment, string, string], { first_seen_at: number }>(
    'SELECT first_seen_at FROM dedup_keys WHERE script_id = ? AND environment = ? AND name = ? AND event_id = ?');

  const accounts: AccountStore = {
    async create(a, tokenHash, tokenPrefix) {
      const now = Date.now();
      createTx.immediate(a, tokenHash, tokenPrefix, now);
      return toAccount(q.getAccount.get(a.scriptId)!);
    },
    async get(scriptId) {
      const r = q.getAccount.get(scriptId);
      return r ? toAccount(r) : null;
    },
    async list() {
      return q.listAccounts.all().map(toAccount);
    },
    async update(scriptId, patch) {
      const keys = (Object.keys(patch) as (keyof AccountPatch)[]).filter((k) => patch[k] !== undefined);
      if (keys.length > 0) {
        const sets = keys.map((k) => `${PATCH_COLUMNS[k]} = ?`).join(', ');
        const values = keys.map((k) => patchValue(k, patch[k]));
        db.prepare(`UPDATE accounts SET ${sets}, updated_at = ? WHERE script_id = ?`).run(...values, Date.now(), scriptId);
      }
      const r = q.getAccount.get(scriptId);
      return r ? toAccount(r) : null;
    },
    async activeTokens(scriptId, now) {
      return q.activeTokens.all(scriptId, now).map(toToken);
    },
    async rotateToken(scriptId, hash, prefix, now, oldExpiresAt) {
      rotateTx.immediate(scriptId, hash, prefix, now, oldExpiresAt);
    },
    async credentials(scriptId, now) {
      // Readers never wait for SQLite's writers in WAL mode; the main connection's short busy timeout bounds the rest.
      return readCredentials.deferred(scriptId, now);
    },
  };

  const events: EventStore = {
    async append(rows) {
      return appendEvents(rows.map(prepareRow));
    },
    async isDuplicate(scriptId, name, eventId, now, environment = 'prod') {
      const seen = getDedup.get(scriptId, environment, name, eventId);
      return seen !== undefined && now - seen.first_seen_at < dedupWindow;
    },
    async seenProducts(scriptId, ids) {
      const seen = new Set<string>();
      for (const id of ids) if (isSeen.get(scriptId, id)) seen.add(id);
      return seen;
    },
    async list(f: EventFilter) {
      const args: unknown[] = [];
      const sql = `SELECT * FROM events ${eventFilterSql(f, args, () => '?')} ORDER BY seq DESC LIMIT ?`;
      args.push(f.limit ?? 100);
      return (db.prepare(sql).all(...args) as SeqEventRow[]).map(toListedEvent);
    },
    async summaries(f: EventFilter) {
      const args: unknown[] = [];
      const sql = `SELECT ${SQLITE_SUMMARY} FROM events ${eventFilterSql(f, args, () => '?')} ORDER BY seq DESC LIMIT ?`;
      args.push(f.limit ?? 100);
      return (db.prepare(sql).all(...args) as EventSummaryRow[]).map(toEventSummary);
    },
  };

  return {
    kind: 'sqlite',
    accounts,
    events,
    destinations: sqliteDestinationStore(db),
    deliveries: sqliteDeliveryStore(db),
    rules: sqliteRuleVersionStore(db),
    async ping() {
      q.ping.get();
    },
    walBytes: () => (opts.file === ':memory:' ? 0 : walBytes(opts.file)),
    async close() {
      stopCheckpoints();
      // The thread first: it waits for batches in flight, and the last connection to close checkpoints the WAL.
      await writer?.close();
      if (db.open) db.close();
    },
  };
}
