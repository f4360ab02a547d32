// Housekeeping: retention purge, dedup-window purge and lease recovery on node-cron, and the
// stats roll-up that feeds the queue gauges on the thread's poll tick (every ROLL_UP_MS: no
// timer of its own, so it never wakes an idle thread by itself; poll-tick.ts). Each job is
// also a plain method, so tests (and operators' scripts) run it directly with any clock. While
// an idle delivery thread's slowed
// ticks are quiet (PostgreSQL, its announcements heard: poll-tick.ts), the scheduled roll-up
// reads the store only at the safety read's pace: between, it sets the gauges again from its
// last snapshot (the ages from the clock), since nothing announced has changed the queue.
import cron, { type ScheduledTask } from 'node-cron';
import { hostname } from 'node:os';
import type { Store } from '../store/types.ts';
import { heardSince } from '../heard-polls.ts';
import { every, heardMark } from '../poll-tick.ts';
import type { DeliveryMetrics } from './delivery-metrics.ts';
import type { LaneLogger } from './lane.ts';
import type { PurgeResult, QueueSnapshot } from './types.ts';

const DAY_MS = 86_400_000;

export interface ScheduledJobsOptions {
  store: Store;
  logger: LaneLogger;
  metrics?: DeliveryMetrics;
  clock?: () => number;
  /** Events, finished deliveries and attempts older than this are purged. */
  retentionDays: number;
  /** Dedup keys older than this window can no longer match; they are purged. */
  dedupWindowDays: number;
  /** Cron expressions (node-cron, optional seconds field). */
  cron?: Partial<Record<CronJob, string>>;
  /** The stats roll-up's period, ms (default ROLL_UP_MS): on the poll tick when a whole number of seconds. */
  rollUpMs?: number;
  /** This process, as recorded with the runs it claims on a shared store. */
  owner?: string;
}

export interface ScheduledJobs {
  start(): void;
  stop(): Promise<void>;
  purgeRetention(): Promise<PurgeResult>;
  purgeDedup(): Promise<number>;
  recoverLeases(): Promise<number>;
  rollUpStats(): Promise<QueueSnapshot>;
}

export const DEFAULT_CRON = {
  retention: '17 3 * * *', // daily, 03:17
  dedup: '7 * * * *', // hourly
  leases: '0 */5 * * * *', // every 5 min (cosmetic: an expired lease is due anyway)
} as const;

type CronJob = keyof typeof DEFAULT_CRON;

/** The stats roll-up's period. */
export const ROLL_UP_MS = 15_000;

export function createScheduledJobs(opts: ScheduledJobsOptions): ScheduledJobs {
  const { store, logger } = opts;
  const clock = opts.clock ?? Date.now;
  const tasks: ScheduledTask[] = [];
  let stopRollUp: (() => void) | undefined;
  /** The last roll-up's snapshot, with the announcement watch its read began under and when (Date.now()). */
  let last: { snapshot: QueueSnapshot; mark: number | null; readAt: number } | undefined;

  const jobs = {
    async purgeRetention() {
      const before = clock() - opts.retentionDays * DAY_MS;
      // First cancel what nothing will send, so it does not pin its events forever.
      const stranded = await store.deliveries.expireStranded(clock(), before);
      if (stranded.removed + stranded.expired > 0) {
        logger.info({ ...stranded, retention_days: opts.retentionDays },
          'pending deliveries canceled: destination removed, or disabled or paused past retention');
      }
      const r = await store.deliveries.purge(before);
      if (r.events + r.deliveries + r.attempts > 0) logger.info({ ...r, retention_days: opts.retentionDays }, 'retention purge');
      return r;
    },
    async purgeDedup() {
      const n = await store.deliveries.purgeDedupKeys(clock() - opts.dedupWindowDays * DAY_MS);
      if (n > 0) logger.info({ dedup_keys: n }, 'dedup window purge');
      return n;
    },
    async recoverLeases() {
      const n = await store.deliveries.recoverExpiredLeases(clock());
      if (n > 0) logger.warn({ leases: n }, 'expired leases recovered (their holder stopped or stalled)');
      return n;
    },
    async rollUpStats() {
      const mark = heardMark();
      const readAt = Date.now();
      const snapshot = await store.deliveries.queueSnapshot();
      last = { snapshot, mark, readAt };
      opts.metrics?.setQueue(snapshot, clock());
      return snapshot;
    },
  };

  /** The scheduled roll-up: from the last snapshot while the announcements stand in for a read (see the top). */
  async function rollUpUnlessHeard(): Promise<unknown> {
    if (last !== undefined && heardSince(last.mark, last.readAt)) {
      opts.metrics?.setQueue(last.snapshot, clock());
      return last.snapshot;
    }
    return jobs.rollUpStats();
  }

  const owner = opts.owner ?? `${hostname()}/${process.pid}`;
  /**
   * A job on data every instance shares: on a shared store (PostgreSQL) only the instance that
   * claims the scheduled slot runs it. (The roll-up feeds this process's own gauges: not here.)
   */
  const schedule = (name: CronJob, run: () => Promise<unknown>) => {
    const expr = opts.cron?.[name] ?? DEFAULT_CRON[name];
    tasks.push(cron.schedule(expr, async (context) => {
      try {
        if (store.claimRun) {
          const slot = Math.floor(context.date.getTime() / 1000) * 1000;
          if (!(await store.claimRun(name, slot, owner))) return;
          logger.info({ job: name, slot: new Date(slot).toISOString(), owner }, 'scheduled job claimed and running');
        }
        await run();
      } catch (err) {
        logger.error({ err, job: name }, 'scheduled job failed');
      }
    }, { name: `tracklane-${name}`, noOverlap: true }));
  };

  return {
    ...jobs,
    start() {
      if (tasks.length > 0) return;
      schedule('retention', jobs.purgeRetention);
      schedule('dedup', jobs.purgeDedup);
      schedule('leases', jobs.recoverLeases);
      // Feeds this process's own gauges: runs everywhere, one at a time.
      let rolling = false;
      stopRollUp = every(opts.rollUpMs ?? ROLL_UP_MS, () => {
        if (rolling) return;
        rolling = true;
        rollUpUnlessHeard()
          .catch((err: unknown) => logger.error({ err, job: 'rollUp' }, 'scheduled job failed'))
          .finally(() => (rolling = false));
      });
      void jobs.rollUpStats().catch(() => undefined);
    },
    async stop() {
      stopRollUp?.();
      stopRollUp = undefined;
      for (const t of tasks.splice(0)) await t.destroy();
    },
  };
}
