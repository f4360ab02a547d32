// SQLite rule versions (the contract is RuleVersionStore in ../types.ts). Every write is one
// BEGIN IMMEDIATE transaction, so writers are serialised and change ids follow commit order:
// a poller that saw revision N has seen every change up to N.
import type Database from 'better-sqlite3';
import {
  DEFAULT_HISTORY_LIMIT, SELECT_CHANGES, SELECT_LIVE, SELECT_REVISION, SELECT_VERSIONS, historyWhere, toRuleChange, toRuleVersion,
  type RuleChangeRow, type RuleVersionRow,
} from '../rule-rows.ts';
import { StaleRuleRevisionError, type NewRuleVersion, type RuleVersion, type RuleVersionStore, type RuleWriteGuard } from '../types.ts';

export function sqliteRuleVersionStore(db: Database.Database): RuleVersionStore {
  const q = {
    revision: db.prepare<[], { r: number }>(SELECT_REVISION),
    insertVersion: db.prepare('INSERT INTO rule_versions (scope, destination, document, author, message, created_at) VALUES (?, ?, ?, ?, ?, ?)'),
    setLive: db.prepare(`INSERT INTO rule_live (scope, destination, version) VALUES (?, ?, ?)
      ON CONFLICT (scope, destination) DO UPDATE SET version = excluded.version`),
    insertChange: db.prepare('INSERT INTO rule_changes (version, scope, destination, action, author, message, at) VALUES (?, ?, ?, ?, ?, ?, ?)'),
    get: db.prepare<[number], RuleVersionRow>(`${SELECT_VERSIONS} WHERE x.version = ?`),
    liveOf: db.prepare<[string, string], { version: number }>('SELECT version FROM rule_live WHERE scope = ? AND destination = ?'),
    unsetLive: db.prepare('DELETE FROM rule_live WHERE scope = ? AND destination = ?'),
    change: db.prepare<[number], RuleChangeRow>(`${SELECT_CHANGES} WHERE x.id = ?`),
    live: db.prepare<[], RuleVersionRow>(SELECT_LIVE),
  };
  const revision = (): number => q.revision.get()!.r;
  const get = (version: number): RuleVersion | null => {
    const r = q.get.get(version);
    return r ? toRuleVersion(r) : null;
  };
  const checkGuard = (guard: RuleWriteGuard | undefined): void => {
    if (guard?.ifRevision === undefined) return;
    const now = revision();
    if (now !== guard.ifRevision) throw new StaleRuleRevisionError(guard.ifRevision, now);
  };

  const publishTx = db.transaction((vs: readonly NewRuleVersion[], now: number, guard: RuleWriteGuard | undefined): number[] => {
    checkGuard(guard);
    return vs.map((v) => {
      const version = Number(q.insertVersion.run(v.scope, v.destination, JSON.stringify(v.document), v.author, v.message, now).lastInsertRowid);
      q.setLive.run(v.scope, v.destination, version);
      q.insertChange.run(version, v.scope, v.destination, 'publish', v.author, v.message, now);
      return version;
    });
  });
  const rollbackTx = db.transaction((version: number, author: string, message: string, now: number, guard: RuleWriteGuard | undefined): boolean => {
    checkGuard(guard);
    const target = q.get.get(version);
    if (target === undefined) return false;
    q.setLive.run(target.scope, target.destination, version);
    q.insertChange.run(version, target.scope, target.destination, 'rollback', author, message, now);
    return true;
  });
  const revertTx = db.transaction((scope: string, destination: string, author: string, message: string, now: number, guard: RuleWriteGuard | undefined): number | null => {
    checkGuard(guard);
    const was = q.liveOf.get(scope, destination);
    if (was === undefined) return null;
    q.unsetLive.run(scope, destination);
    return Number(q.insertChange.run(was.version, scope, destination, 'revert', author, message, now).lastInsertRowid);
  });

  const publishAll = async (vs: readonly NewRuleVersion[], now: number, guard?: RuleWriteGuard) =>
    publishTx.immediate(vs, now, guard).map((v) => get(v)!);
  return {
    publishAll,
    async publish(v, now, guard) {
      return (await publishAll([v], now, guard))[0];
    },
    async rollback(version, author, message, now, guard) {
      return rollbackTx.immediate(version, author, message, now, guard) ? get(version) : null;
    },
    async revert(key, author, message, now, guard) {
      const id = revertTx.immediate(key.scope, key.destination, author, message, now, guard);
      return id === null ? null : toRuleChange(q.change.get(id)!);
    },
    async get(version) {
      return get(version);
    },
    async live() {
      return q.live.all().map(toRuleVersion);
    },
    async history(filter) {
      const { where, args } = historyWhere(filter, () => '?');
      const rows = db.prepare<unknown[], RuleChangeRow>(`${SELECT_CHANGES} ${where} ORDER BY x.id DESC LIMIT ?`)
        .all(...args, filter.limit ?? DEFAULT_HISTORY_LIMIT);
      return rows.map(toRuleChange);
    },
    async revision() {
      return revision();
    },
  };
}
