// Custom records (custom endpoints' durable output) in PostgreSQL: each request's rows in
// one transaction, acknowledged after COMMIT; a keyed record replaces the stored one with
// the same (account, endpoint, type, key), so a retried request does not double anything.
// Endpoint version uses are summed in memory and upserted every second.
import type pg from 'pg';
import type { CustomRecordStore, StoredCustomRecord, VersionUsage } from '../custom-record-contract.ts';
import { createUsageBuffer } from '../usage-buffer.ts';

interface Row {
  script_id: string; customer: string; endpoint: string; type: string; record_key: string | null;
  request_id: string; received_at: number; data: string;
}

export function pgCustomRecordStore(pool: pg.Pool): CustomRecordStore {
  let inFlight = 0;
  const idle: (() => void)[] = [];
  const usage = createUsageBuffer(async (rows) => {
    const col = <K extends keyof VersionUsage>(k: K) => rows.map((r) => r[k]);
    await pool.query(`INSERT INTO custom_endpoint_usage (script_id, customer, endpoint, version, env, uses, first_used_at, last_used_at)
      SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::bigint[], $7::bigint[], $8::bigint[])
      ON CONFLICT (script_id, customer, endpoint, version, env) DO UPDATE SET uses = custom_endpoint_usage.uses + excluded.uses,
        first_used_at = LEAST(custom_endpoint_usage.first_used_at, excluded.first_used_at),
        last_used_at = GREATEST(custom_endpoint_usage.last_used_at, excluded.last_used_at)`,
    [col('scriptId'), col('customer'), col('endpoint'), col('version'), col('env'), col('uses'), col('firstUsedAt'), col('lastUsedAt')]);
  });
  return {
    countUse: (use) => usage.count(use),
    async listUsage(customer) {
      const { rows } = await pool.query<VersionUsage>(`SELECT script_id AS "scriptId", customer, endpoint, version, env, uses::float8 AS uses,
          first_used_at::float8 AS "firstUsedAt", last_used_at::float8 AS "lastUsedAt"
        FROM custom_endpoint_usage ${customer === undefined ? '' : 'WHERE customer = $1'} ORDER BY customer, endpoint, version, script_id, env`,
      customer === undefined ? [] : [customer]);
      return rows;
    },
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
    async drain() {
      await usage.flush();
      if (inFlight > 0) await new Promise<void>((r) => idle.push(r));
    },
    async close() {
      await usage.flush();
      // The pool belongs to the store, which closes it.
    },
  };
}
