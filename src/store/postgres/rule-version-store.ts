// PostgreSQL rule versions (the contract is RuleVersionStore in ../types.ts). Every write
// takes one advisory lock first, so writes from all instances are serialised and change ids
// follow commit order: a poller that saw revision N has seen every change up to N (with
// concurrent writers a later id could commit first and an earlier one be missed). Every
// write announces itself (NOTIFY_CHANGES, delivered at COMMIT): an idle instance's slowed
// revision poll is back on its second.
import type pg from 'pg';
import {
  DEFAULT_HISTORY_LIMIT, SELECT_CHANGES, SELECT_LIVE, SELECT_REVISION, SELECT_VERSIONS, historyWhere, toRuleChange, toRuleVersion,
  type RuleChangeRow, type RuleVersionRow,
} from '../rule-rows.ts';
import { StaleRuleRevisionError, type NewRuleVersion, type RuleVersion, type RuleVersionStore, type RuleWriteGuard } from '../types.ts';
import { tx } from './connection.ts';
import { NOTIFY_CHANGES } from './notify.ts';

/** pg_advisory_xact_lock key of rule writes ('rule' as a number). */
const RULE_WRITE_LOCK = 0x72756c65;

const GET = `${SELECT_VERSIONS} WHERE x.version = $1`;
const SET_LIVE = `INSERT INTO rule_live (scope, destination, version) VALUES ($1, $2, $3)
  ON CONFLICT (scope, destination) DO UPDATE SET version = excluded.version`;
const INSERT_CHANGE = 'INSERT INTO rule_changes (version, scope, destination, action, author, message, at) VALUES ($1, $2, $3, $4, $5, $6, $7)';

export function pgRuleVersionStore(pool: pg.Pool): RuleVersionStore {
  const get = async (q: pg.Pool | pg.PoolClient, version: number): Promise<RuleVersion | null> => {
    const r = (await q.query<RuleVersionRow>(GET, [version])).rows[0];
    return r ? toRuleVersion(r) : null;
  };
  /** Runs `fn` holding the rule write lock, after checking the guard. */
  const write = <T>(guard: RuleWriteGuard | undefined, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> => tx(pool, async (c) => {
    await c.query('SELECT pg_advisory_xact_lock($1)', [RULE_WRITE_LOCK]);
    if (guard?.ifRevision !== undefined) {
      const now = (await c.query<{ r: number }>(SELECT_REVISION)).rows[0].r;
      if (now !== guard.ifRevision) throw new StaleRuleRevisionError(guard.ifRevision, now);
    }
    const out = await fn(c);
    await c.query(NOTIFY_CHANGES);
    return out;
  });

  const publishAll = async (vs: readonly NewRuleVersion[], now: number, guard?: RuleWriteGuard): Promise<RuleVersion[]> => {
    const versions = await write(guard, async (c) => {
      const out: number[] = [];
      for (const v of vs) {
        const { rows } = await c.query<{ version: number }>(`INSERT INTO rule_versions (scope, destination, document, author, message, created_at)
          VALUES ($1, $2, $3, $4, $5, $6) RETURNING version`, [v.scope, v.destination, JSON.stringify(v.document), v.author, v.message, now]);
        const version = rows[0].version;
        await c.query(SET_LIVE, [v.scope, v.destination, version]);
        await c.query(INSERT_CHANGE, [version, v.scope, v.destination, 'publish', v.author, v.message, now]);
        out.push(version);
      }
      return out;
    });
    return Promise.all(versions.map(async (v) => (await get(pool, v))!));
  };

  return {
    publishAll,
    async publish(v, now, guard) {
      return (await publishAll([v], now, guard))[0];
    },
    async rollback(version, author, message, now, guard) {
      const done = await write(guard, async (c) => {
        const target = await get(c, version);
        if (target === null) return false;
        await c.query(SET_LIVE, [target.scope, target.destination, version]);
        await c.query(INSERT_CHANGE, [version, target.scope, target.destination, 'rollback', author, message, now]);
        return true;
      });
      return done ? get(pool, version) : null;
    },
    async revert(key, author, message, now, guard) {
      const id = await write(guard, async (c) => {
        const was = (await c.query<{ version: number }>('DELETE FROM rule_live WHERE scope = $1 AND destination = $2 RETURNING version', [key.scope, key.destination])).rows[0];
        if (was === undefined) return null;
        const { rows } = await c.query<{ id: number }>(`${INSERT_CHANGE} RETURNING id`, [was.version, key.scope, key.destination, 'revert', author, message, now]);
        return rows[0].id;
      });
      if (id === null) return null;
      return toRuleChange((await pool.query<RuleChangeRow>(`${SELECT_CHANGES} WHERE x.id = $1`, [id])).rows[0]);
    },
    async get(version) {
      return get(pool, version);
    },
    async live() {
      return (await pool.query<RuleVersionRow>(SELECT_LIVE)).rows.map(toRuleVersion);
    },
    async history(filter) {
      const { where, args } = historyWhere(filter, (n) => `$${n}`);
      const { rows } = await pool.query<RuleChangeRow>(`${SELECT_CHANGES} ${where} ORDER BY x.id DESC LIMIT $${args.length + 1}`,
        [...args, filter.limit ?? DEFAULT_HISTORY_LIMIT]);
      return rows.map(toRuleChange);
    },
    async revision() {
      // Named: prepared once per connection; every instance asks every second.
      return (await pool.query<{ r: number }>({ name: 'tl_rule_revision', text: SELECT_REVISION })).rows[0].r;
    },
  };
}
