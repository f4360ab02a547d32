// Custom records (custom endpoints' durable output) in PostgreSQL: each request's rows in
// one transaction, acknowledged after COMMIT; a keyed record replaces the stored one with
// the same (account, endpoint, type, key), so a retried request does not double anything.
import type pg from 'pg';
import type { CustomRecordStore, StoredCustomRecord } from '../custom-record-contract.ts';

interface Row {
  script_id: string; customer: string; endpoint: string; type: string; record_key: string | null;
  request_id: string; received_at: number; data: string;
}

export function pgCustomRecordStore(pool: pg.Pool): CustomRecordStore {
  let inFlight = 0;
  const idle: (() => void)[] = [];
  return {
    async write(rows) {
      if (rows.length === 0) return;
      // Within one request the last record of a key wins, as successive writes would.
      const byKey = new Map<string, StoredCustomRecord>();
      const unkeyed: StoredCustomRecord[] = [];
      for (const r of rows) {
        if (r.key === null) unkeyed.push(r);
        else byKey.set(JSON.stringify([r.scriptId, r.endpoint, r.type, r.key]), r);
      }
      const all = [...unkeyed, ...byKey.values()];
      const col = <K extends keyof StoredCustomRecord>(k: K) => all.map((r) => r[k]);
      inFlight++;
      try {
        await pool.query(`INSERT INTO custom_records (script_id, customer, endpoint, type, record_key, request_id, received_at, data)
          SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::text[])
          ON CONFLICT (script_id, endpoint, type, record_key) WHERE record_key IS NOT NULL
          DO UPDATE SET customer = excluded.customer, request_id = excluded.request_id, received_at = excluded.received_at, data = excluded.data`,
        [col('scriptId'), col('customer'), col('endpoint'), col('type'), col('key'), col('requestId'), col('receivedAt'), all.map((r) => JSON.stringify(r.data))]);
      } finally {
        if (--inFlight === 0) for (const f of idle.splice(0)) f();
      }
    },
    async list(f = {}) {
      const where: string[] = [];
      const args: unknown[] = [];
      if (f.scriptId) { args.push(f.scriptId); where.push(`script_id = $${args.length}`); }
      if (f.endpoint) { args.push(f.endpoint); where.push(`endpoint = $${args.length}`); }
      args.push(f.limit ?? 100);
      const { rows } = await pool.query<Row>(`SELECT * FROM custom_records ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT $${args.length}`, args);
      return rows.map((r) => ({
        scriptId: r.script_id, customer: r.customer, endpoint: r.endpoint, type: r.type, key: r.record_key,
        requestId: r.request_id, receivedAt: r.received_at, data: JSON.parse(r.data) as Record<string, unknown>,
      }));
    },
    drain() {
      return inFlight === 0 ? Promise.resolve() : new Promise<void>((r) => idle.push(r));
    },
    async close() {
      // The pool belongs to the store, which closes it.
    },
  };
}
