// SQLite destinations: one row per destination connected to an account. Removal only
// marks the row, so deliveries recorded against it keep their reference; its pending
// deliveries are canceled with it, so they do not pin their events past retention.
import type Database from 'better-sqlite3';
import type { DestinationRecord, DestinationStore } from '../types.ts';
import { cancelRemovedSql } from './delivery-maintenance.ts';

interface Row {
  id: string; script_id: string; type: string; name: string; enabled: number; settings: string;
  created_at: number; updated_at: number;
}

const toRecord = (r: Row): DestinationRecord => ({
  id: r.id, scriptId: r.script_id, type: r.type, name: r.name, enabled: r.enabled === 1,
  settings: JSON.parse(r.settings) as Record<string, unknown>, createdAt: r.created_at, updatedAt: r.updated_at,
});

export function sqliteDestinationStore(db: Database.Database): DestinationStore {
  const q = {
    insert: db.prepare(`INSERT INTO destinations (id, script_id, type, name, enabled, settings, created_at, updated_at)
      VALUES (@id, @script_id, @type, @name, @enabled, @settings, @now, @now)`),
    get: db.prepare<[string, string], Row>('SELECT * FROM destinations WHERE script_id = ? AND id = ? AND removed_at IS NULL'),
    find: db.prepare<[string], Row>('SELECT * FROM destinations WHERE id = ? AND removed_at IS NULL'),
    list: db.prepare<[string], Row>('SELECT * FROM destinations WHERE script_id = ? AND removed_at IS NULL ORDER BY created_at, id'),
    update: db.prepare(`UPDATE destinations SET name = @name, enabled = @enabled, settings = @settings, updated_at = @now
      WHERE script_id = @script_id AND id = @id AND removed_at IS NULL`),
    remove: db.prepare('UPDATE destinations SET removed_at = ? WHERE script_id = ? AND id = ? AND removed_at IS NULL'),
    cancel: db.prepare(cancelRemovedSql()),
  };
  const removeTx = db.transaction((scriptId: string, id: string, now: number) => {
    if (q.remove.run(now, scriptId, id).changes === 0) return { removed: false, canceled: 0 };
    return { removed: true, canceled: q.cancel.run({ now, id }).changes };
  });
  return {
    async add(d) {
      q.insert.run({ id: d.id, script_id: d.scriptId, type: d.type, name: d.name, enabled: d.enabled ? 1 : 0, settings: JSON.stringify(d.settings), now: Date.now() });
      return toRecord(q.get.get(d.scriptId, d.id)!);
    },
    async list(scriptId) {
      return q.list.all(scriptId).map(toRecord);
    },
    async get(scriptId, id) {
      const r = q.get.get(scriptId, id);
      return r ? toRecord(r) : null;
    },
    async find(id) {
      const r = q.find.get(id);
      return r ? toRecord(r) : null;
    },
    async update(scriptId, id, patch) {
      const current = q.get.get(scriptId, id);
      if (!current) return null;
      const next = toRecord(current);
      q.update.run({
        script_id: scriptId, id, now: Date.now(),
        name: patch.name ?? next.name,
        enabled: (patch.enabled ?? next.enabled) ? 1 : 0,
        settings: JSON.stringify(patch.settings ?? next.settings),
      });
      return toRecord(q.get.get(scriptId, id)!);
    },
    async remove(scriptId, id) {
      return removeTx.immediate(scriptId, id, Date.now());
    },
  };
}
