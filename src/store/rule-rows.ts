// Rule versions as both stores keep them (rule_versions, rule_live, rule_changes; see
// migration 008 and PostgreSQL migration 2): the shared SELECTs and the row conversions.
// A row's `live` is joined from rule_live (SQLite answers 0/1, PostgreSQL a boolean).
import type { RuleFile } from '../domain/rule-documents.ts';
import type { RuleChange, RuleVersion } from './types.ts';

export interface RuleVersionRow {
  version: number; scope: string; destination: string; document: string; author: string; message: string;
  created_at: number; live: boolean | number;
}

export interface RuleChangeRow {
  id: number; version: number; scope: string; destination: string; action: RuleChange['action']; author: string;
  message: string; at: number; live: boolean | number;
}

const LIVE_JOIN = 'LEFT JOIN rule_live l ON l.scope = x.scope AND l.destination = x.destination AND l.version = x.version';

/** Versions with `live`; add `WHERE x.version = …`. */
export const SELECT_VERSIONS = `SELECT x.version, x.scope, x.destination, x.document, x.author, x.message, x.created_at,
  (l.version IS NOT NULL) AS live FROM rule_versions x ${LIVE_JOIN}`;

/** Every live version: defaults first, then accounts by script id; each by destination. */
export const SELECT_LIVE = `${SELECT_VERSIONS} WHERE l.version IS NOT NULL ORDER BY (x.scope <> 'default'), x.scope, x.destination`;

/** Changes with `live`; add the filter, `ORDER BY x.id DESC` and the limit. */
export const SELECT_CHANGES = `SELECT x.id, x.version, x.scope, x.destination, x.action, x.author, x.message, x.at,
  (l.version IS NOT NULL) AS live FROM rule_changes x ${LIVE_JOIN}`;

/** The revision: the newest change's id, 0 before the first. */
export const SELECT_REVISION = 'SELECT coalesce(max(id), 0) AS r FROM rule_changes';

export const DEFAULT_HISTORY_LIMIT = 100;

export const toRuleVersion = (r: RuleVersionRow): RuleVersion => ({
  version: r.version, scope: r.scope, destination: r.destination, document: JSON.parse(r.document) as RuleFile,
  author: r.author, message: r.message, createdAt: r.created_at, live: r.live === true || r.live === 1,
});

export const toRuleChange = (r: RuleChangeRow): RuleChange => ({
  id: r.id, version: r.version, scope: r.scope, destination: r.destination, action: r.action, author: r.author,
  message: r.message, at: r.at, live: r.live === true || r.live === 1,
});

/** `WHERE …` of a history filter, with placeholders made by `param` (`?` or `$n`), and its arguments. */
export function historyWhere(filter: { scope?: string; destination?: string }, param: (n: number) => string): { where: string; args: string[] } {
  const parts: string[] = [];
  const args: string[] = [];
  if (filter.scope !== undefined) { args.push(filter.scope); parts.push(`x.scope = ${param(args.length)}`); }
  if (filter.destination !== undefined) { args.push(filter.destination); parts.push(`x.destination = ${param(args.length)}`); }
  return { where: parts.length > 0 ? `WHERE ${parts.join(' AND ')}` : '', args };
}
