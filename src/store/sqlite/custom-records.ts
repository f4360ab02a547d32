// Custom records (migration 006, table custom_records) on their own connection to the
// service's SQLite file, opened with the store's pragmas (WAL, synchronous=FULL) and written
// through the store's group commit: rows of concurrent requests share a transaction, and
// each request's promise settles once its rows are committed (or the commit failed).
// Endpoint version uses (migration 011) are summed in memory and upserted every second.
import type Database from 'better-sqlite3';
import type { CustomRecordStore, StoredCustomRecord, VersionUsage } from '../custom-record-contract.ts';
import { createGroupCommit } from '../group-commit.ts';
import { openConnection } from './connection.ts';
import { createUsageBuffer } from '../usage-buffer.ts';

interface Row {
  script_id: string; customer: string; endpoint: string; type: string; record_key: string | null;
  request_id: string; received_at: number; data: string;
}

/** Rows per transaction at most (a request's rows are never split). */
const MAX_BATCH = 512;

export function openCustomRecordStore(file: string, opts: { busyTimeoutMs?: number } = {}): CustomRecordStore {
  const db = openConnection(file, opts.busyTimeoutMs);
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
  const upsertUsage = db.prepare(`INSERT INTO custom_endpoint_usage (script_id, customer, endpoint, version, env, uses, first_used_at, last_used_at)
    VALUES (@scriptId, @customer, @endpoint, @version, @env, @uses, @firstUsedAt, @lastUsedAt)
    ON CONFLICT (script_id, customer, endpoint, version, env) DO UPDATE SET uses = uses + excluded.uses,
      first_used_at = MIN(first_used_at, excluded.first_used_at), last_used_at = MAX(last_used_at, excluded.last_used_at)`);
  const usage = createUsageBuffer(async (rows) => {
    db.transaction(() => {
      for (const r of rows) upsertUsage.run(r);
    }).immediate();
  });
  const insertAll = db.transaction((rows: StoredCustomRecord[]) => {
    for (const r of rows) insert.run({ ...r, data: JSON.stringify(r.data) });
  });
  const group = createGroupCommit<StoredCustomRecord, void>(async (rows) => {
    insertAll.immediate(rows);
    return rows.map(() => undefined);
  }, { maxBatch: MAX_BATCH });

  return {
    async write(rows) {
      if (rows.length > 0) await group.submitMany(rows);
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
    countUse: (use) => usage.count(use),
    async listUsage(customer) {
      const rows = db.prepare(`SELECT script_id AS scriptId, customer, endpoint, version, env, uses, first_used_at AS firstUsedAt, last_used_at AS lastUsedAt
        FROM custom_endpoint_usage ${customer === undefined ? '' : 'WHERE customer = ?'} ORDER BY customer, endpoint, version, script_id, env`)
        .all(...(customer === undefined ? [] : [customer]));
      return rows as VersionUsage[];
    },
    drain: async () => {
      await usage.flush();
      await group.drain();
    },
    async close() {
      await usage.flush();
      await group.drain();
      if (db.open) db.close();
    },
  };
}
