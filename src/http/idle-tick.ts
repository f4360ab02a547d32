// The HTTP thread's poll tick slows when idle, as the delivery thread's does (poll-tick.ts
// slowWhenIdle; src/delivery/README.md, "Idle"): after IDLE_AFTER_TICKS ticks with no
// connection open and nothing announced, to IDLE_TICK_MS, and back on the second at the next
// connection (connection-sweep.ts: its sweeps, each tick while one is open, keep it there) or
// announcement: a commit of any process to the SQLite file (its WAL, watched), or on
// PostgreSQL a rule publish or destination change (NOTIFY, heard only while the rule
// watcher's connection is up: else the tick stays at a second). What rides this thread's tick
// then runs as often as the slowed tick allows: the rule store's revision (SQLite; announced
// on PostgreSQL, announced-poll.ts), the rule files' and custom endpoints' stat polls (every
// 5 s: unchanged), the delivery thread's watchdog checks (every 10 s instead of 7 s: a stuck
// thread is ended up to 20 s past DELIVERY_WATCHDOG_MS) and the npm-start parent check.
// Only with the delivery thread: delivery run on this thread (tests) slows nothing.
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { slowWhenIdle, stopSlowing } from '../poll-tick.ts';
import { sqliteWalFile } from '../store/open-store.ts';
import type { Store } from '../store/types.ts';

/** Slows this thread's tick as described at the top; returns the undo (at close). */
export function slowHttpTickWhenIdle(config: Config, store: Store, logger: Logger): () => void {
  const announced = store.kind === 'sqlite'
    ? { announcedBy: sqliteWalFile(config) }
    : store.watchChanges && { announcer: store.watchChanges.bind(store) };
  if (!announced) return () => undefined;
  const { idleTickMs, idleAfterTicks } = config.idleTick;
  slowWhenIdle({ ...announced, idleTickMs, idleAfterTicks, logger });
  return stopSlowing;
}
