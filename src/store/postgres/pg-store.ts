// PostgreSQL implementation of the Store, for several instances sharing one database.
// Every query is keyed by account where the data belongs to one; intake appends a whole
// group commit in one transaction of four statements (dedup claims, events, seen products,
// NOTIFY), acknowledged after COMMIT; the fan-out reads accepted events from the events table
// after its cursor (fan-out-cursor.ts). Dedup is decided
// by the primary key of dedup_keys inside that transaction, so two instances storing the
// same event at the same moment store one `accepted` and one `duplicate`.
import type pg from 'pg';
import type { Account, AccountPatch, TokenRecord } from '../../domain/accounts.ts';
import type { AccountStore, EventFilter, EventRecord, EventStatus, EventStore, Store } from '../types.ts';
import { DEFAULT_DEDUP_WINDOW_MS, prepareRow, type PreparedRow } from '../prepare-row.ts';
import { createPool, isTimeoutError, PG_INTAKE_LIMITS, tx } from './connection.ts';
import { StoreBusyError } from '../store-busy.ts';
import type { PgEventRow } from './rows.ts';
import { eventSummaryColumns, toEventSummary, toListedEvent, type EventSummaryRow } from '../event-rows.ts';
import { packPayload, type StoredPayload } from '../payload-codec.ts';
import { byteaArrayParam } from './bytea-array.ts';

/** An event listing's columns, the issues counted by PostgreSQL (the columns hold JSON text). */
const PG_SUMMARY = eventSummaryColumns({ length: (c) => `json_array_length(${c}::json)`, firstCode: (c) => `(${c}::json -> 0 ->> 'code')` });
import { migrate } from './migrations.ts';
import { ensureCursors } from './fan-out-cursor.ts';
import { pgDestinationStore } from './destination-store.ts';
import { pgDeliveryStore } from './delivery-store.ts';
import { pgRuleVersionStore } from './rule-version-store.ts';
import { CHANGES_CHANNEL, createNotifier, EVENTS_PAYLOAD, WORK_CHANNEL } from './notify.ts';
import { eventFilterSql } from '../event-filter.ts';
import { pinMap } from '../pin-map.ts';

export interface PgStoreOptions {
  url: string;
  poolSize?: number;
  dedupWindowMs?: number;
  /**
   * Apply migrations on open (default true; `tracklane migrate` runs them on their own);
   * 'existing': only to a database that has the schema already, else NoPgSchemaError.
   */
  migrate?: boolean | 'existing';
  onError?: (err: Error) => void;
}

interface AccountRow {
  script_id: string; name: string; tier: Account['tier']; addon: boolean; enabled: boolean;
  host: string | null; country: string | null; tax_rate: number | null; extra_events: string;
  customer: string | null; rate_limit: number | null; endpoint_pins: string; consent_default: Account['consentDefault']; created_at: number; updated_at: number;
}
interface TokenRow { id: number; script_id: string; hash: string; prefix: string; created_at: number; expires_at: number | null }

const toAccount = (r: AccountRow): Account => ({
  scriptId: r.script_id, name: r.name, tier: r.tier, addon: r.addon, enabled: r.enabled, host: r.host,
  country: r.country, taxRate: r.tax_rate, extraEvents: JSON.parse(r.extra_events) as string[], customer: r.customer,
  rateLimit: r.rate_limit, endpointPins: pinMap(r.endpoint_pins),
  consentDefault: r.consent_default, createdAt: r.created_at, updatedAt: r.updated_at,
});

const toToken = (r: TokenRow): TokenRecord => ({
  id: r.id, scriptId: r.script_id, hash: r.hash, prefix: r.prefix, createdAt: r.created_at, expiresAt: r.expires_at,
});


const PATCH_COLUMNS: Record<keyof AccountPatch, string> = {
  name: 'name', tier: 'tier', addon: 'addon', enabled: 'enabled', host: 'host', country: 'country',
  taxRate: 'tax_rate', extraEvents: 'extra_events', customer: 'customer', rateLimit: 'rate_limit', endpointPins: 'endpoint_pins',
  consentDefault: 'consent_default',
};

const patchValue = (key: keyof AccountPatch, v: unknown): unknown => (key === 'extraEvents' || key === 'endpointPins' ? JSON.stringify(v) : v);

/** The key of a row's dedup claim, or null when the row claims none. */
const dedupKey = (r: PreparedRow): string | null =>
  r.status !== 'accepted' || r.eventId === null || r.name === null ? null : JSON.stringify([r.scriptId, r.environment, r.name, r.eventId]);

/**
 * The append transaction, one statement: within one batch the first row of a key makes the
 * claim (`claim`: the key's index, `claimer`) and a later one is a duplicate of it; a claim
 * succeeds when the key is new or its first sighting is older than the window (then it is
 * renewed). The upsert's RETURNING (the keys won) decides each row's status in the statement,
 * which stores the rows with it, the accepted rows' products, and returns the statuses in order.
 */
const APPEND_SQL = `WITH k AS (SELECT * FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[]) WITH ORDINALITY AS k(s, e, n, i, at, o)),
  won AS (INSERT INTO dedup_keys (script_id, environment, name, event_id, first_seen_at) SELECT s, e, n, i, at FROM k
    ON CONFLICT (script_id, environment, name, event_id) DO UPDATE SET first_seen_at = excluded.first_seen_at
      WHERE dedup_keys.first_seen_at <= excluded.first_seen_at - $9::bigint
    RETURNING script_id, environment, name, event_id),
  x AS MATERIALIZED (SELECT x.*, CASE WHEN x.claim IS NULL THEN x.status
      WHEN x.claimer AND EXISTS (SELECT 1 FROM won w JOIN k ON k.s = w.script_id AND k.e = w.environment AND k.n = w.name AND k.i = w.event_id
        WHERE k.o = x.claim) THEN 'accepted' ELSE 'duplicate' END AS st
    FROM ROWS FROM (json_to_recordset($1::json) AS (id text, script_id text, name text, event_id text, status text, source text,
      request_id text, received_at bigint, errors text, warnings text, payload text, claim bigint, claimer boolean), unnest($3::bytea[]))
      WITH ORDINALITY AS x(id, script_id, name, event_id, status, source, request_id, received_at, errors, warnings, payload, claim, claimer, packed, o)),
  ins AS (INSERT INTO events (id, script_id, name, event_id, status, source, request_id, received_at, errors, warnings, payload, payload_packed)
    SELECT id, script_id, name, event_id, st, source, request_id, received_at, errors, warnings, payload, packed FROM x ORDER BY o
    RETURNING status),
  seen AS (INSERT INTO seen_products (script_id, product_id) SELECT s.script_id, s.product_id
    FROM json_to_recordset($2::json) AS s(script_id text, product_id text, o bigint) JOIN x ON x.o = s.o AND x.st = 'accepted'
    ON CONFLICT DO NOTHING),
  -- NOTIFY is delivered at COMMIT: every instance's dispatcher wakes for the new work.
  notified AS (SELECT CASE WHEN EXISTS (SELECT 1 FROM ins WHERE status = 'accepted') THEN pg_notify('${WORK_CHANNEL}', '${EVENTS_PAYLOAD}') END AS n)
  SELECT x.st AS status FROM x CROSS JOIN notified ORDER BY x.o`;

async function appendRows(c: pg.PoolClient, rows: readonly PreparedRow[], payloads: readonly StoredPayload[], windowMs: number): Promise<EventStatus[]> {
  const claimers = new Map<string, number>();
  rows.forEach((r, i) => {
    const k = dedupKey(r);
    if (k !== null && !claimers.has(k)) claimers.set(k, i);
  });
  const keys = [...claimers.keys()];
  const claimOf = new Map(keys.map((k, n) => [k, n + 1]));
  const at = [...claimers.values()].map((i) => rows[i]);
  // The rows travel as one JSON document: V8's JSON.stringify is far cheaper than
  // node-postgres escaping kilobyte payload strings element by element into array literals.
  // The packed payloads (payload-codec.ts) travel beside it, as they are: one binary bytea[]
  // parameter (bytea-array.ts), its elements in the rows' order.
  const doc = JSON.stringify(rows.map((r, i) => {
    const k = dedupKey(r);
    return {
      id: r.id, script_id: r.scriptId, name: r.name, event_id: r.eventId, status: r.status, source: r.source, request_id: r.requestId,
      received_at: r.receivedAt, errors: r.errors, warnings: r.warnings, payload: payloads[i].payload,
      claim: k === null ? null : claimOf.get(k), claimer: k !== null && claimers.get(k) === i,
    };
  }));
  const seen = rows.flatMap((r, i) => (r.status === 'accepted' ? r.productIds.map((p) => ({ script_id: r.scriptId, product_id: p, o: i + 1 })) : []));
  const { rows: out } = await c.query<{ status: EventStatus }>({
    // Named: prepared once per connection, not parsed and planned per batch.
    name: 'tl_append',
    text: APPEND_SQL,
    values: [doc, JSON.stringify(seen), byteaArrayParam(payloads.map((p) => p.packed)),
      at.map((r) => r.scriptId), at.map((r) => r.environment), at.map((r) => r.name), at.map((r) => r.eventId), at.map((r) => r.receivedAt), windowMs],
  });
  return out.map((r) => r.status);
}

/** The tables an intake commit writes (see appendRows). */
const INTAKE_TABLES = 'dedup_keys, events, seen_products';
/** The tables a credential check reads (accounts.credentials). */
const CREDENTIAL_TABLES = 'accounts, access_tokens';

const ACCOUNT_SQL = 'SELECT * FROM accounts WHERE script_id = $1';
const ACTIVE_TOKENS_SQL = 'SELECT * FROM access_tokens WHERE script_id = $1 AND (expires_at IS NULL OR expires_at > $2) ORDER BY id DESC';

const intakeBusy = `intake commits wait for a lock held by another session (${INTAKE_TABLES}) beyond ${PG_INTAKE_LIMITS.lockMs} ms; intake answers 503 until it is released`;
const credentialsBusy = `credential checks wait for a lock held by another session (${CREDENTIAL_TABLES}) beyond ${PG_INTAKE_LIMITS.lockMs} ms; `
  + 'requests of accounts not checked within the last second answer 503 until it is released';

/** Runs a LOCK statement; its lock or statement timeout becomes a StoreBusyError saying `busy`. */
async function lockOrBusy(c: pg.PoolClient, sql: string, busy: string): Promise<void> {
  try {
    await c.query(sql);
  } catch (err) {
    throw isTimeoutError(err) ? new StoreBusyError(busy) : err;
  }
}

export interface PgStore extends Store {
  readonly pool: pg.Pool;
}

export const isPgStore = (s: Store): s is PgStore => s.kind === 'postgres' && 'pool' in s;

export async function openPostgresStore(opts: PgStoreOptions): Promise<PgStore> {
  const pool = createPool({ url: opts.url, max: opts.poolSize, onError: opts.onError });
  const windowMs = opts.dedupWindowMs ?? DEFAULT_DEDUP_WINDOW_MS;
  try {
    if (opts.migrate !== false) await migrate(pool, { create: opts.migrate !== 'existing' });
    await ensureCursors(pool);
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
  const notifier = createNotifier(opts.url, opts.onError);
  const changes = createNotifier(opts.url, opts.onError, [CHANGES_CHANNEL]);
  const one = async <R extends pg.QueryResultRow>(sql: string, args: unknown[]): Promise<R | undefined> => (await pool.query<R>(sql, args)).rows[0];

  const accounts: AccountStore = {
    async create(a, tokenHash, tokenPrefix) {
      const now = Date.now();
      await tx(pool, async (c) => {
        await c.query(`INSERT INTO accounts (script_id, name, tier, addon, enabled, host, country, tax_rate, extra_events, customer, created_at, updated_at)
          VALUES ($1, $2, $3, $4, true, $5, $6, $7, '[]', NULL, $8, $8)`, [a.scriptId, a.name, a.tier, a.addon, a.host, a.country, a.taxRate, now]);
        await c.query('INSERT INTO access_tokens (script_id, hash, prefix, created_at, expires_at) VALUES ($1, $2, $3, $4, NULL)', [a.scriptId, tokenHash, tokenPrefix, now]);
      });
      return toAccount((await one<AccountRow>('SELECT * FROM accounts WHERE script_id = $1', [a.scriptId]))!);
    },
    async get(scriptId) {
      const r = await one<AccountRow>(ACCOUNT_SQL, [scriptId]);
      return r ? toAccount(r) : null;
    },
    async list() {
      return (await pool.query<AccountRow>('SELECT * FROM accounts ORDER BY created_at, script_id')).rows.map(toAccount);
    },
    async update(scriptId, patch) {
      const keys = (Object.keys(patch) as (keyof AccountPatch)[]).filter((k) => patch[k] !== undefined);
      if (keys.length > 0) {
        const sets = keys.map((k, i) => `${PATCH_COLUMNS[k]} = $${i + 1}`).join(', ');
        await pool.query(`UPDATE accounts SET ${sets}, updated_at = $${keys.length + 1} WHERE script_id = $${keys.length + 2}`,
          [...keys.map((k) => patchValue(k, patch[k])), Date.now(), scriptId]);
      }
      const r = await one<AccountRow>('SELECT * FROM accounts WHERE script_id = $1', [scriptId]);
      return r ? toAccount(r) : null;
    },
    async activeTokens(scriptId, now) {
      return (await pool.query<TokenRow>(ACTIVE_TOKENS_SQL, [scriptId, now])).rows.map(toToken);
    },
    async credentials(scriptId, now) {
      try {
        // One transaction under intake's limits: a lock on accounts or access_tokens (LOCK TABLE,
        // a long ALTER) fails the check after intake's lock timeout instead of holding intake.
        return await tx(pool, async (c) => {
          const account = (await c.query<AccountRow>(ACCOUNT_SQL, [scriptId])).rows[0];
          const tokens = (await c.query<TokenRow>(ACTIVE_TOKENS_SQL, [scriptId, now])).rows;
          return { account: account ? toAccount(account) : null, tokens: tokens.map(toToken) };
        }, { limits: PG_INTAKE_LIMITS });
      } catch (err) {
        if (!isTimeoutError(err)) throw err;
        throw new StoreBusyError(credentialsBusy);
      }
    },
    async rotateToken(scriptId, hash, prefix, now, oldExpiresAt) {
      await tx(pool, async (c) => {
        // Tokens already expiring sooner keep their earlier expiry.
        await c.query('UPDATE access_tokens SET expires_at = LEAST(COALESCE(expires_at, $1), $1) WHERE script_id = $2 AND (expires_at IS NULL OR expires_at > $3)',
          [oldExpiresAt, scriptId, now]);
        await c.query('INSERT INTO access_tokens (script_id, hash, prefix, created_at, expires_at) VALUES ($1, $2, $3, $4, NULL)', [scriptId, hash, prefix, now]);
      });
    },
  };

  const events: EventStore = {
    async append(rows) {
      if (rows.length === 0) return [];
      const prepared = rows.map(prepareRow);
      // Packed before the transaction: its locks are not held while deflate runs.
      const payloads = prepared.map((r) => packPayload(r.payload));
      // Bounded waits: a lock held elsewhere fails the commit (503 + Retry-After), it never holds intake.
      return tx(pool, (c) => appendRows(c, prepared, payloads, windowMs), { limits: PG_INTAKE_LIMITS });
    },
    async isDuplicate(scriptId, name, eventId, now, environment = 'prod') {
      const r = await one<{ first_seen_at: number }>(
        'SELECT first_seen_at FROM dedup_keys WHERE script_id = $1 AND environment = $2 AND name = $3 AND event_id = $4', [scriptId, environment, name, eventId]);
      return r !== undefined && now - r.first_seen_at < windowMs;
    },
    async seenProducts(scriptId, ids) {
      if (ids.length === 0) return new Set();
      const { rows } = await pool.query<{ product_id: string }>(
        'SELECT product_id FROM seen_products WHERE script_id = $1 AND product_id = ANY($2::text[])', [scriptId, [...ids]]);
      return new Set(rows.map((r) => r.product_id));
    },
    async list(f: EventFilter) {
      const args: unknown[] = [];
      const cond = eventFilterSql(f, args, (n) => `$${n}`);
      args.push(f.limit ?? 100);
      const { rows } = await pool.query<PgEventRow>(`SELECT * FROM events ${cond} ORDER BY seq DESC LIMIT $${args.length}`, args);
      return rows.map(toListedEvent);
    },
    async summaries(f: EventFilter) {
      const args: unknown[] = [];
      const cond = eventFilterSql(f, args, (n) => `$${n}`);
      args.push(f.limit ?? 100);
      const { rows } = await pool.query<EventSummaryRow>(`SELECT ${PG_SUMMARY} FROM events ${cond} ORDER BY seq DESC LIMIT $${args.length}`, args);
      return rows.map(toEventSummary);
    },
  };

  let closed = false;
  return {
    kind: 'postgres',
    pool,
    accounts,
    events,
    destinations: pgDestinationStore(pool),
    deliveries: pgDeliveryStore(pool),
    rules: pgRuleVersionStore(pool),
    async ping() {
      // Readiness is whether an intake request could go ahead now: its credential check's
      // reads and its commit's writes. Each takes the locks those statements take, within
      // intake's own limit (released at once), and a timeout names what waits.
      await tx(pool, async (c) => {
        await lockOrBusy(c, `LOCK TABLE ${CREDENTIAL_TABLES} IN ACCESS SHARE MODE`, credentialsBusy);
        await lockOrBusy(c, `LOCK TABLE ${INTAKE_TABLES} IN ROW EXCLUSIVE MODE`, intakeBusy);
      }, { limits: PG_INTAKE_LIMITS });
    },
    onWork: (listener) => notifier.onWork(listener),
    watchAnnouncements: (onAnnounce) => notifier.watch(onAnnounce),
    watchChanges: (onChange) => changes.watch(onChange),
    async claimRun(job, slot, owner) {
      const r = await pool.query('INSERT INTO job_runs (job, slot, owner, started_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING',
        [job, slot, owner, Date.now()]);
      return (r.rowCount ?? 0) > 0;
    },
    async close() {
      if (closed) return;
      closed = true;
      await notifier.close();
      await changes.close();
      await pool.end();
    },
  };
}
