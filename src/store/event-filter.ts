// The WHERE clause of an event listing, the same for both stores; only the placeholder
// differs (`?` for SQLite, `$n` for PostgreSQL). Newest first, by insertion order.
import type { EventFilter } from './types.ts';

/** Builds `WHERE …` (or '') and pushes the arguments; `mark(n)` renders the n-th placeholder (1-based). */
export function eventFilterSql(f: EventFilter, args: unknown[], mark: (n: number) => string): string {
  const where: string[] = [];
  const add = (sql: (m: string) => string, value: unknown) => {
    args.push(value);
    where.push(sql(mark(args.length)));
  };
  if (f.scriptId) add((m) => `script_id = ${m}`, f.scriptId);
  if (f.status) add((m) => `status = ${m}`, f.status);
  if (f.eventId) add((m) => `event_id = ${m}`, f.eventId);
  if (f.id) add((m) => `id = ${m}`, f.id);
  if (f.name) add((m) => `name = ${m}`, f.name);
  if (f.since !== undefined) add((m) => `received_at >= ${m}`, f.since);
  if (f.until !== undefined) add((m) => `received_at < ${m}`, f.until);
  if (f.search) {
    args.push(f.search);
    const a = mark(args.length);
    args.push(f.search);
    where.push(`(id = ${a} OR event_id = ${mark(args.length)})`);
  }
  if (f.beforeSeq !== undefined) add((m) => `seq < ${m}`, f.beforeSeq);
  return where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
}
