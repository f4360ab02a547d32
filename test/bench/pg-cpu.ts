// PostgreSQL's own CPU during a bench window, read from /proc for the server processes
// pg_stat_activity names: the backends serving one database (the bench's), and apart from
// them the background processes every database shares (WAL writer, checkpointer, …).
import pg from 'pg';
import { readFileSync } from 'node:fs';
import { PG_ADMIN_URL } from '../helpers/postgres.ts';

/** CPU ticks (1/100 s, user + system, every thread) of `pid`, or null once it is gone or not visible here. */
function ticks(pid: number): number | null {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

export interface PgCpu {
  /** CPU seconds of the database's backends during the window, and of the shared background processes. */
  backends: number; background: number;
  /** How many backend processes were seen, and whether /proc showed them (PostgreSQL on this machine). */
  processes: number; visible: boolean;
}

/**
 * Starts watching: polls pg_stat_activity (from the admin database, so the watcher's own
 * backend is not counted) every `everyMs` and each process's ticks, keeping the first and
 * latest readings per process. A backend that starts in the window counts from zero; one that
 * ends in it keeps its last reading (up to `everyMs` of its CPU is lost).
 */
export async function watchPostgresCpu(database: string, everyMs = 250): Promise<{ stop(): Promise<PgCpu> }> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL });
  await client.connect();
  const seen = new Map<number, { first: number; last: number; backend: boolean }>();
  let startedAt = true;
  let visible = false;
  const poll = async () => {
    const { rows } = await client.query<{ pid: number; backend: boolean }>(
      'SELECT pid, datname IS NOT DISTINCT FROM $1 AS backend FROM pg_stat_activity WHERE datname = $1 OR datname IS NULL AND backend_type <> $2',
      [database, 'client backend']);
    for (const r of rows) {
      const t = ticks(r.pid);
      if (t === null) continue;
      visible = true;
      const known = seen.get(r.pid);
      if (known) known.last = t;
      else seen.set(r.pid, { first: startedAt ? t : 0, last: t, backend: r.backend });
    }
    startedAt = false;
  };
  await poll();
  let stopped = false;
  let tick = Promise.resolve();
  const timer = setInterval(() => {
    tick = tick.then(() => (stopped ? undefined : poll())).catch(() => undefined);
  }, everyMs);
  return {
    async stop() {
      clearInterval(timer);
      await tick;
      await poll();
      stopped = true;
      await client.end();
      const sum = (backend: boolean) => [...seen.values()].filter((s) => s.backend === backend).reduce((n, s) => n + s.last - s.first, 0) / 100;
      return { backends: sum(true), background: sum(false), processes: [...seen.values()].filter((s) => s.backend).length, visible };
    },
  };
}
