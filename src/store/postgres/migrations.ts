// PostgreSQL schema, versioned. `migrate` applies what is missing in one transaction under
// an advisory lock, so instances that start together do not race: the first applies, the
// others wait for the lock and then find nothing left to do.
import type pg from 'pg';
import schemaV1 from './migrations/001-schema.ts';

/** pg_advisory_xact_lock key of the migration lock ('tracklane' as a number). */
const MIGRATION_LOCK = 0x74726b6c;

const MIGRATIONS: { version: number; sql: string }[] = [
  { version: 1, sql: schemaV1 },
  {
    // Mapping rules as versioned data: every published rule file (immutable), which version
    // serves each (scope, destination), and the history whose newest id is the revision.
    version: 2,
    sql: `
      CREATE TABLE rule_versions (
        version     BIGSERIAL PRIMARY KEY,
        scope       TEXT NOT NULL,
        destination TEXT NOT NULL,
        -- TEXT, not JSONB: the document is kept exactly as published (key order included).
        document    TEXT NOT NULL,
        author      TEXT NOT NULL,
        message     TEXT NOT NULL,
        created_at  BIGINT NOT NULL
      );
      CREATE INDEX rule_versions_key ON rule_versions(scope, destination, version);
      CREATE TABLE rule_live (
        scope       TEXT NOT NULL,
        destination TEXT NOT NULL,
        version     BIGINT NOT NULL REFERENCES rule_versions(version),
        PRIMARY KEY (scope, destination)
      );
      CREATE TABLE rule_changes (
        id          BIGSERIAL PRIMARY KEY,
        version     BIGINT NOT NULL REFERENCES rule_versions(version),
        scope       TEXT NOT NULL,
        destination TEXT NOT NULL,
        action      TEXT NOT NULL CHECK (action IN ('publish', 'rollback')),
        author      TEXT NOT NULL,
        message     TEXT NOT NULL,
        at          BIGINT NOT NULL
      );
      CREATE INDEX rule_changes_key ON rule_changes(scope, destination, id);
    `,
  },
  {
    // An event whose rules are held for some of its destinations (src/rules/rule-holds.ts)
    // stays queued for those only: the destination ids it still owes (NULL: every one).
    version: 3,
    sql: `ALTER TABLE dispatch_queue ADD COLUMN held_for TEXT;`,
  },
  {
    // Custom endpoint versions: an account's pins (endpoint name → version, JSON), and every
    // use of a version counted per account and env, so old shapes are retired knowingly.
    version: 4,
    sql: `
      ALTER TABLE accounts ADD COLUMN endpoint_pins TEXT NOT NULL DEFAULT '{}';
      CREATE TABLE custom_endpoint_usage (
        script_id     TEXT NOT NULL,
        customer      TEXT NOT NULL,
        endpoint      TEXT NOT NULL,
        version       INTEGER NOT NULL,
        env           TEXT NOT NULL,
        uses          BIGINT NOT NULL,
        first_used_at BIGINT NOT NULL,
        last_used_at  BIGINT NOT NULL,
        PRIMARY KEY (script_id, customer, endpoint, version, env)
      );
    `,
  },
  {
    // An account's consent default: how an event without a valid consent object is read
    // for it, 'granted' (the spec's rule, and every existing account's) or 'denied'.
    version: 5,
    sql: `ALTER TABLE accounts ADD COLUMN consent_default TEXT NOT NULL DEFAULT 'granted'
      CHECK (consent_default IN ('granted', 'denied'));`,
  },
  {
    // A rule change may be a 'revert': no version live any more, the RULES_DIR file or
    // plugin default serves again (the change names the version that was live).
    version: 6,
    sql: `ALTER TABLE rule_changes DROP CONSTRAINT rule_changes_action_check;
      ALTER TABLE rule_changes ADD CONSTRAINT rule_changes_action_check CHECK (action IN ('publish', 'rollback', 'revert'));`,
  },
  {
    // What each attempt sent (JSON: method, URL, headers with secrets masked, the body up to
    // 16 KiB, its size and SHA-256), so a trace shows it instead of a request rebuilt later.
    version: 7,
    sql: `ALTER TABLE delivery_attempts ADD COLUMN request TEXT;`,
  },
  {
    // Delivery bookkeeping written once on the happy path (as SQLite's migration 15): a
    // delivery handed straight to a send lane gets its row when its attempt is recorded, so a
    // row needs a key of its own to be inserted at most once: its event, its destination and
    // which of that destination's native events it is (`part`). Rows stored before keep part
    // NULL (distinct to the unique index). Intake already queues events itself (no trigger).
    version: 8,
    sql: `ALTER TABLE deliveries ADD COLUMN part INTEGER;
      DROP INDEX deliveries_event_seq;
      CREATE UNIQUE INDEX deliveries_event_part ON deliveries(event_seq, destination_id, part);`,
  },
  {
    // A delivery's item (the mapped native event it is sent from) in a table of its own (as
    // SQLite's migration 16), kept only while the delivery may still be sent (pending, or
    // failed/dead for a replay) and deleted when it is delivered or purged. No foreign key,
    // as on SQLite: the store deletes a delivery's item itself.
    version: 9,
    sql: `CREATE TABLE delivery_items (
        delivery_id BIGINT PRIMARY KEY,
        item        TEXT NOT NULL
      );
      INSERT INTO delivery_items (delivery_id, item) SELECT id, item FROM deliveries WHERE item IS NOT NULL;
      ALTER TABLE deliveries DROP COLUMN item;`,
  },
  {
    // How many fan-outs of a queued event started mapping it and never finished (as SQLite's
    // migration 17): a claim adds one, a finished fan-out leaves the queue or resets it; one
    // cut short twice is failed (`mapping_failed`) instead of being mapped again.
    version: 10,
    sql: `ALTER TABLE dispatch_queue ADD COLUMN map_claims INTEGER NOT NULL DEFAULT 0;`,
  },
  {
    // The due retries of a destination in an index of their own (as SQLite's migration 18),
    // so a lane claims them ahead of its backlog of first attempts without reading through it.
    version: 11,
    sql: `CREATE INDEX deliveries_retry_due ON deliveries(destination_id, next_attempt_at) WHERE status = 'pending' AND attempts > 0;`,
  },
  {
    // Less written per delivery (as SQLite's migrations 9 and 19). A delivery keeps the first
    // attempt recorded for it in its row (attempt_id); only its other attempts get a link row,
    // so one settled by its first request has none. Links stored before stay as they are (the
    // attempts of a delivery are its links and its attempt_id). And no index on deliveries'
    // event_id: lookups by event id go through events_event_id → seq → deliveries_event_part.
    version: 12,
    sql: `ALTER TABLE deliveries ADD COLUMN attempt_id BIGINT;
      DROP INDEX deliveries_event;`,
  },
  {
    // A delivery delivered by its first attempt has no row (as SQLite's migration 20,
    // docs/delivered-without-row.md): the attempt lists it, [event_seq, part] pairs in
    // `delivered` (JSON text), with its account and the pairs' seq range, indexed by destination
    // and the range's end (which attempts delivered an event) and by account (listings).
    version: 13,
    sql: `ALTER TABLE delivery_attempts ADD COLUMN script_id TEXT, ADD COLUMN delivered TEXT,
        ADD COLUMN first_seq BIGINT, ADD COLUMN last_seq BIGINT;
      CREATE INDEX delivery_attempts_delivered_seq ON delivery_attempts(destination_id, last_seq) WHERE delivered IS NOT NULL;
      CREATE INDEX delivery_attempts_delivered_account ON delivery_attempts(script_id, id) WHERE delivered IS NOT NULL;`,
  },
  {
    // An event's payload deflated against a preset dictionary (as SQLite's migration 21,
    // payload-codec.ts), about a quarter of its JSON text; the payload column then holds ''.
    // Rows stored before keep their text (payload_packed NULL). A column without a default:
    // nothing is rewritten. IF NOT EXISTS: a database an earlier migration's test rewinds to
    // its version still has the column. STORAGE EXTERNAL: a large one goes to TOAST without
    // pglz trying to compress what deflate already did.
    version: 14,
    sql: `ALTER TABLE events ADD COLUMN IF NOT EXISTS payload_packed BYTEA;
      ALTER TABLE events ALTER COLUMN payload_packed SET STORAGE EXTERNAL;`,
  },
  {
    // Fan-out from the event log (docs/fan-out-cursor-postgres.md): intake stops writing a dispatch_queue
    // row per accepted event; the fan-out reads events after a cursor per partition (runs of 256
    // consecutive seqs, 8 partitions: fan-out-cursor.ts). A position is (fan_xid, seq): fan_xid is the id of the transaction that
    // stored the event, as sequence values are not assigned in commit order. Events stored
    // before have fan_xid NULL (the column is added without a default, so nothing is
    // rewritten, then given one): they all have dispatch_queue rows already, which stay. The
    // partition is an expression of the index rather than a stored column, which would rewrite
    // the table. `seen`: the highest position a claim ever read (events after it have never been
    // fanned out, so a claim looks up no rows for them). IF NOT EXISTS, as version 14: a
    // database an earlier migration's test rewinds to its version still has them.
    version: 15,
    sql: `ALTER TABLE events ADD COLUMN IF NOT EXISTS fan_xid xid8;
      ALTER TABLE events ALTER COLUMN fan_xid SET DEFAULT pg_current_xact_id();
      CREATE INDEX IF NOT EXISTS events_fan_out ON events (((seq / 256) % 8), fan_xid, seq) WHERE status = 'accepted' AND fan_xid IS NOT NULL;
      CREATE TABLE IF NOT EXISTS fanout_cursors (
        part        SMALLINT PRIMARY KEY,
        cursor_xid  xid8 NOT NULL,
        cursor_seq  BIGINT NOT NULL,
        mapped_xid  xid8 NOT NULL,
        mapped_seq  BIGINT NOT NULL,
        claimed_xid xid8 NOT NULL,
        claimed_seq BIGINT NOT NULL,
        seen_xid    xid8 NOT NULL,
        seen_seq    BIGINT NOT NULL,
        lease_owner TEXT,
        lease_until BIGINT
      );
      INSERT INTO fanout_cursors SELECT p, '0', m, '0', m, '0', m, '0', m, NULL, NULL
        FROM generate_series(0, 7) AS p, (SELECT coalesce(max(seq), 0) AS m FROM events) AS e ON CONFLICT (part) DO NOTHING;`,
  },
  {
    // An index on the event row's own id (as SQLite's migration 23): the admin API's event
    // view and trace, `events show`, the search box and the deliveries of an event look
    // events up by it, and read the whole table without. Not UNIQUE: intake gives every row a
    // fresh random UUID, but nothing enforced it, and a database holding a duplicate must
    // still migrate. Built inside the migration's transaction (CONCURRENTLY cannot be), so
    // intake waits while a large events table is indexed. IF NOT EXISTS: a database an
    // earlier migration's test rewinds to its version still has it.
    version: 16,
    sql: `CREATE INDEX IF NOT EXISTS events_id ON events(id);`,
  },
  {
    // Whether an attempt lists a pair (delivered-pairs.ts listedPair, checked for every handed-off
    // delivery an attempt record settles) reads the destination's attempts with last_seq in
    // [seq, seq + DELIVERED_SEQ_SPAN] and first_seq <= seq. With first_seq outside the index each
    // attempt in that range was a heap visit, and there are as many as the destination's attempts
    // recorded for later events (hundreds once fan-out partitions interleave); as the index's third
    // column, first_seq is tested in the index and only the attempts that may list the pair are read.
    // IF (NOT) EXISTS, as version 14: a database an earlier migration's test rewinds to its version has them.
    version: 17,
    sql: `CREATE INDEX IF NOT EXISTS delivery_attempts_delivered_range ON delivery_attempts(destination_id, last_seq, first_seq) WHERE delivered IS NOT NULL;
      DROP INDEX IF EXISTS delivery_attempts_delivered_seq;`,
  },
];

export const PG_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;
/** Every version this build knows, in the order `migrate` applies them. */
export const PG_SCHEMA_VERSIONS: readonly number[] = MIGRATIONS.map((m) => m.version);

/** The database holds no tracklane schema, and the caller may not create one (only `migrate` and the server do). */
export class NoPgSchemaError extends Error {
  override name = 'NoPgSchemaError';
}

export interface MigrateOptions {
  /** Create the schema in a database that has none (default true); false: NoPgSchemaError instead. */
  create?: boolean;
}

/** Applies missing migrations; returns the versions applied (empty when up to date). */
export async function migrate(pool: pg.Pool, opts: MigrateOptions = {}): Promise<number[]> {
  const client = await pool.connect();
  const onError = () => undefined; // the failing query reports it
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const applied = await migrateInTransaction(client, opts);
    await client.query('COMMIT');
    return applied;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.off('error', onError);
    client.release();
  }
}

/**
 * `migrate` inside the caller's open transaction, which then holds the migration lock until
 * it ends: `migrate-store` creates the schema and copies the data in one transaction, so a
 * failed copy leaves not even the tables behind, and instances starting meanwhile wait.
 */
export async function migrateInTransaction(client: pg.ClientBase, opts: MigrateOptions = {}): Promise<number[]> {
  await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
  if (opts.create === false) {
    const { rows: [schema] } = await client.query<{ present: boolean }>("SELECT to_regclass('schema_migrations') IS NOT NULL AS present");
    const any = schema.present && (await client.query('SELECT 1 FROM schema_migrations LIMIT 1')).rowCount === 1;
    if (!any) throw new NoPgSchemaError('the database has no tracklane schema');
  }
  await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)');
  const { rows } = await client.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations');
  const current = rows[0].v ?? 0;
  if (current > PG_SCHEMA_VERSION) {
    throw new Error(`the database schema is version ${current}, newer than this build's ${PG_SCHEMA_VERSION}: upgrade tracklane`);
  }
  const applied: number[] = [];
  for (const m of MIGRATIONS) {
    if (m.version <= current) continue;
    await client.query(m.sql);
    await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [m.version, Date.now()]);
    applied.push(m.version);
  }
  return applied;
}
