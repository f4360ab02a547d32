// Durable custom records (migration 006, table custom_records) on their own connection to
// the service's SQLite file, with the same guarantees as events: WAL, synchronous=FULL, and
// group commit, each request resolved only after its rows are committed.
import Database from 'better-sqlite3';

export interface StoredCustomRecord {
  scriptId: string;
  customer: string;
  endpoint: string;
  type: string;
  /** Idempotency key: a record with the same (account, endpoint, type, key) replaces the stored one. */
  key: string | null;
  requestId: string;
  receivedAt: number;
  data: Record<string, unknown>;
}

export interface CustomRecordFilter {
  scriptId?: string;
  endpoint?: string;
  limit?: number;
}

export interface CustomRecordStore {
  /** Resolves once every row is committed; rejects when the commit failed (then none is). */
  write(rows: StoredCustomRecord[]): Promise<void>;
  /** Newest first. */
  list(filter?: CustomRecordFilter): Promise<StoredCustomRecord[]>;
  /** Resolves when nothing is waiting to be written. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

interface Row {
  script_id: string; customer: string; endpoint: string; type: string; record_key: string | null;
  request_id: string; received_at: number; data: string;
}

interface Waiting {
  rows: StoredCustomRecord[];
  resolve: () => void;
  reject: (e: unknown) => void;
}

export function openCustomRecordStore(file: string, opts: { busyTimeoutMs?: number } = {}): CustomRecordStore {
  const db = new Database(file, { fileMustExist: true });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? 5000}`);
  let insert: Database.Statement;
  try {
    insert = db.prepare(`INSERT INTO custom_records (script_id, customer, endpoint, type, record_key, request_id, received_at, data)
      VALUES (@scriptId, @customer, @endpoint, @type, @key, @requestId, @receivedAt, @data)
      ON CONFLICT (script_id, endpoint, type, record_key) WHERE record_key IS NOT NULL
      DO UPDATE SET customer = excluded.customer, request_id = excluded.request_id, received_at = excluded.received_at, data = excluded.data`);
  } catch (e) {
    db.close();
    throw new Error(`custom records: the database at ${file} has no custom_records table (migration 006): ${(e as Error).message}`);
  }
  const insertAll = db.transaction((rows: StoredCustomRecord[]) => {
    for (const r of rows) insert.run({ ...r, data: JSON.stringify(r.data) });
  });

  let queue: Waiting[] = [];
  let scheduled = false;
  const idle: (() => void)[] = [];

  function flush(): void {
    scheduled = false;
    const batch = queue;
    queue = [];
    try {
      insertAll.immediate(batch.flatMap((w) => w.rows));
      for (const w of batch) w.resolve();
    } catch (e) {
      for (const w of batch) w.reject(e);
    }
    for (const f of idle.splice(0)) f();
  }

  return {
    write(rows) {
      if (rows.length === 0) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        queue.push({ rows, resolve, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    async list(f = {}) {
      const where: string[] = [];
      const args: unknown[] = [];
      if (f.scriptId) { where.push('script_id = ?'); args.push(f.scriptId); }
      if (f.endpoint) { where.push('endpoint = ?'); args.push(f.endpoint); }
      args.push(f.limit ?? 100);
      const rows = db.prepare(`SELECT * FROM custom_records ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT ?`).all(...args) as Row[];
      return rows.map((r) => ({
        scriptId: r.script_id, customer: r.customer, endpoint: r.endpoint, type: r.type, key: r.record_key,
        requestId: r.request_id, receivedAt: r.received_at, data: JSON.parse(r.data) as Record<string, unknown>,
      }));
    },
    drain() {
      if (!scheduled) return Promise.resolve();
      return new Promise<void>((r) => idle.push(r));
    },
    async close() {
      if (db.open) db.close();
    },
  };
}
