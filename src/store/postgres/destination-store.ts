// PostgreSQL destinations (see the SQLite twin for the model): removal only marks the row
// and cancels its free pending deliveries in the same transaction. Each change announces
// itself (NOTIFY_CHANGES): an idle instance's slowed destination re-read is back on its second.
import type pg from 'pg';
import type { DestinationRecord, DestinationStore } from '../types.ts';
import { tx } from './connection.ts';
import { NOTIFY_CHANGES } from './notify.ts';
import { REMOVED_MESSAGE } from '../delivery-contract.ts';

interface Row {
  id: string; script_id: string; type: string; name: string; enabled: boolean; settings: string;
  created_at: number; updated_at: number;
}

const toRecord = (r: Row): DestinationRecord => ({
  id: r.id, scriptId: r.script_id, type: r.type, name: r.name, enabled: r.enabled,
  settings: JSON.parse(r.settings) as Record<string, unknown>, createdAt: r.created_at, updatedAt: r.updated_at,
});

const GET = 'SELECT * FROM destinations WHERE script_id = $1 AND id = $2 AND removed_at IS NULL';

export function pgDestinationStore(pool: pg.Pool): DestinationStore {
  const get = async (scriptId: string, id: string): Promise<Row | undefined> => (await pool.query<Row>(GET, [scriptId, id])).rows[0];
  return {
    async add(d) {
      const now = Date.now();
      await pool.query(`INSERT INTO destinations (id, script_id, type, name, enabled, settings, created_at, updated_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`, [d.id, d.scriptId, d.type, d.name, d.enabled, JSON.stringify(d.settings), now]);
      await pool.query(NOTIFY_CHANGES);
      return toRecord((await get(d.scriptId, d.id))!);
    },
    async list(scriptId) {
      return (await pool.query<Row>('SELECT * FROM destinations WHERE script_id = $1 AND removed_at IS NULL ORDER BY created_at, id', [scriptId])).rows.map(toRecord);
    },
    async get(scriptId, id) {
      const r = await get(scriptId, id);
      return r ? toRecord(r) : null;
    },
    async find(id) {
      const r = (await pool.query<Row>('SELECT * FROM destinations WHERE id = $1 AND removed_at IS NULL', [id])).rows[0];
      return r ? toRecord(r) : null;
    },
    async update(scriptId, id, patch) {
      const r = await pool.query<Row>(`UPDATE destinations SET name = COALESCE($3, name), enabled = COALESCE($4, enabled),
          settings = COALESCE($5, settings), updated_at = $6
        WHERE script_id = $1 AND id = $2 AND removed_at IS NULL RETURNING *`,
      [scriptId, id, patch.name ?? null, patch.enabled ?? null, patch.settings === undefined ? null : JSON.stringify(patch.settings), Date.now()]);
      if (r.rows[0]) await pool.query(NOTIFY_CHANGES);
      return r.rows[0] ? toRecord(r.rows[0]) : null;
    },
    async remove(scriptId, id) {
      const now = Date.now();
      return tx(pool, async (c) => {
        const removed = await c.query('UPDATE destinations SET removed_at = $1 WHERE script_id = $2 AND id = $3 AND removed_at IS NULL', [now, scriptId, id]);
        if (removed.rowCount === 0) return { removed: false, canceled: 0 };
        await c.query(NOTIFY_CHANGES);
        const canceled = await c.query(`UPDATE deliveries SET status = 'skipped', skip_reason = 'destination_removed', last_error = $3,
            next_attempt_at = NULL, lease_owner = NULL, lease_until = NULL, updated_at = $1
          WHERE destination_id = $2 AND status = 'pending' AND (lease_until IS NULL OR lease_until <= $1)`, [now, id, REMOVED_MESSAGE]);
        return { removed: true, canceled: canceled.rowCount ?? 0 };
      });
    },
  };
}
