// Builds delivery from the Config: the guarded HTTP sender, the dispatcher and the scheduled
// jobs, started together and stopped together (dispatcher first, then the sender's pools).
import type { Config } from '../config.ts';
import type { DeliveryParts } from './delivery-parts.ts';
import { createDispatcher, type Dispatcher, type DispatcherOptions } from './dispatcher.ts';
import { createHttpSender, type HttpSender } from './http-sender.ts';
import { createScheduledJobs, type ScheduledJobs, type ScheduledJobsOptions } from './scheduled-jobs.ts';

/** What tests may shrink (leases, linger, schedule, pause window, cron, roll-up period). */
export type DeliveryOverrides = Partial<Omit<DispatcherOptions, 'store' | 'plugins' | 'rules' | 'pool' | 'logger' | 'sender'>> & {
  sender?: HttpSender;
  cron?: ScheduledJobsOptions['cron'];
  rollUpMs?: number;
  /** False: build everything but start nothing (tests drive runOnce). */
  autoStart?: boolean;
};

export interface DeliveryDeps extends DeliveryParts {
  config: Config;
  overrides?: DeliveryOverrides;
}

export interface DeliveryRuntime {
  dispatcher: Dispatcher;
  jobs: ScheduledJobs;
  sender: HttpSender;
  /** Stops the jobs and the dispatcher (in-flight sends get `graceMs`), then closes the sender. */
  stop(graceMs?: number): Promise<void>;
}

export async function startDelivery(deps: DeliveryDeps): Promise<DeliveryRuntime> {
  const { config, overrides = {} } = deps;
  const { cron, rollUpMs, autoStart = true, sender: givenSender, ...dispatcherOverrides } = overrides;
  const sendTimeoutMs = dispatcherOverrides.sendTimeoutMs ?? 15_000;
  const sender = givenSender ?? createHttpSender({
    allowPrivate: config.allowPrivateDestinations,
    connectTimeoutMs: 5_000,
    totalTimeoutMs: sendTimeoutMs,
    maxResponseBytes: 20_000,
  });
  const metrics = dispatcherOverrides.metrics ?? deps.metrics;
  const dispatcher = createDispatcher({
    store: deps.store,
    plugins: deps.plugins,
    rules: deps.rules,
    pool: deps.pool,
    sender,
    logger: deps.logger,
    pauseAfterMs: config.pauseAfterHours * 3_600_000,
    ...dispatcherOverrides,
    metrics,
    sendTimeoutMs,
  });
  const jobs = createScheduledJobs({
    owner: dispatcher.owner,
    store: deps.store,
    logger: deps.logger,
    metrics,
    clock: dispatcherOverrides.clock,
    retentionDays: config.retentionDays,
    dedupWindowDays: config.dedupWindowDays,
    cron: cron ?? cronFromEnv(),
    rollUpMs,
  });
  // Several instances on one PostgreSQL: work another instance commits wakes this one too —
  // an intake commit the fan-out only; stored deliveries the send lanes as well, at most once
  // per LANES_WAKE_MS however many commits announce them (each lane wake is a claim query).
  const wakeLanes = coalesced(() => dispatcher.wakeAll(), LANES_WAKE_MS);
  const unsubscribe = deps.store.onWork?.((kind) => (kind === 'events' ? dispatcher.wake() : wakeLanes()));
  if (autoStart) {
    await dispatcher.start();
    jobs.start();
  }
  let stopping: Promise<void> | undefined;
  return {
    dispatcher,
    jobs,
    sender,
    stop(graceMs = 5_000) {
      stopping ??= (async () => {
        unsubscribe?.();
        await jobs.stop();
        await dispatcher.stop(graceMs);
        if (!givenSender) await sender.close();
      })();
      return stopping;
    },
  };
}

/**
 * Runs `begin` now when the rules can be delivered with (whole, or partial with only the
 * broken scopes held: see rule-holds.ts); otherwise once a reload makes them so. Until then
 * events are accepted and queued, and nothing is skipped for want of a rule that is only
 * broken. Resolves when `begin` ran or was deferred.
 */
export async function startWhenRulesValid(
  rules: { usable(): boolean; onReload(listener: (e: { ok: boolean }) => void): () => void },
  begin: () => Promise<unknown>,
  logger: { info(msg: string): void; error(obj: object, msg: string): void },
): Promise<void> {
  if (rules.usable()) {
    await begin();
    return;
  }
  const off = rules.onReload(() => {
    if (!rules.usable()) return;
    off();
    begin().then(() => logger.info('rules are usable now: delivery started'), (err: unknown) => logger.error({ err }, 'starting delivery failed'));
  });
}

/**
 * TRACKLANE_CRON: a JSON object of cron expressions per job (e.g. leases every 2 s),
 * for tests that watch scheduled jobs run in real processes; unset in production.
 */
function cronFromEnv(): ScheduledJobsOptions['cron'] {
  const raw = process.env.TRACKLANE_CRON;
  if (!raw) return undefined;
  try {
    return JSON.parse(raw) as ScheduledJobsOptions['cron'];
  } catch {
    throw new Error(`TRACKLANE_CRON must be a JSON object of cron expressions, got ${raw}`);
  }
}

/** Deliveries announced by other instances wake the lanes at most this often. */
export const LANES_WAKE_MS = 10;

/** `f` run once, `ms` after the first of any number of calls within that time. */
function coalesced(f: () => void, ms: number): () => void {
  let timer: NodeJS.Timeout | undefined;
  return () => {
    if (timer !== undefined) return;
    timer = setTimeout(() => {
      timer = undefined;
      f();
    }, ms);
    timer.unref();
  };
}
