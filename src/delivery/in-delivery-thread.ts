// The delivery thread's own side, run inside the thread: fan-out, send lanes and the
// scheduled jobs on their own event loop and their own SQLite connection, so intake (the main
// thread) and delivery use both cores instead of taking turns on one. It loads plugins and
// rules itself and watches the rules (files and store versions) like the main thread does;
// the main thread (delivery-thread-host.ts) wakes it when a commit adds work and asks it for
// its metrics text on each scrape.
import { parentPort, workerData } from 'node:worker_threads';
import { Registry } from 'prom-client';
import type { Config } from '../config.ts';
import { createLogger } from '../logger.ts';
import { openStore, sqliteWalFile } from '../store/open-store.ts';
import { slowWhenIdle } from '../poll-tick.ts';
import { HEARD_POLL_MS } from '../announced-poll.ts';
import { loadPlugins } from '../destinations/load-plugins.ts';
import { usePluginRules } from '../rules/plugin-rules.ts';
import { startRuleWatcher } from '../rules/rule-watcher.ts';
import { createServerHashPool, serverPoolThreads } from '../workers/pool.ts';
import { registerDeliveryMetrics } from './delivery-metrics.ts';
import { startDelivery, startWhenRulesValid, type DeliveryRuntime } from './start-delivery.ts';

export interface DeliveryThreadData {
  config: Config;
}

export type ToDeliveryThread =
  | { t: 'wake' }
  | { t: 'metrics'; id: number }
  | { t: 'stop'; graceMs: number }
  /** The host's watchdog: answered with 'pong' whenever the event loop gets to it. */
  | { t: 'ping' }
  /** Tests: die of an uncaught error on the next turn (between, never inside, store calls). */
  | { t: 'crash' };

export type FromDeliveryThread =
  | { t: 'ready' }
  /** Delivery started with this lease owner id (the main thread releases its leases if the thread dies). */
  | { t: 'owner'; owner: string }
  | { t: 'metrics'; id: number; text: string }
  | { t: 'stopped' }
  | { t: 'pong' }
  | { t: 'failed'; message: string };

export function runInDeliveryThread(): void {
  const port = parentPort!;
  const { config } = workerData as DeliveryThreadData;
  const logger = createLogger(config.logLevel).child({ thread: 'delivery' });
  const post = (m: FromDeliveryThread) => port.postMessage(m);
  const registry = new Registry();
  const metrics = registerDeliveryMetrics(registry);
  let delivery: DeliveryRuntime | null = null;
  let stopping = false;

  const start = (async () => {
    const plugins = await loadPlugins(config.pluginsDirs);
    const store = await openStore(config, 'server');
    usePluginRules(config.rulesDir, config.pluginsDirs);
    const rules = startRuleWatcher({ dir: config.rulesDir, logger, store: store.rules });
    await rules.ready;
    const pool = createServerHashPool(serverPoolThreads(config.workers).delivery, logger);
    const begin = async () => {
      if (stopping) return;
      delivery = await startDelivery({ config, store, plugins, rules, pool, logger, metrics });
      post({ t: 'owner', owner: delivery.dispatcher.owner });
      // Idle, this thread's polls tick every IDLE_TICK_MS (poll-tick.ts) and what any process
      // commits brings the second back (a CLI's replay or queued event, the HTTP thread's
      // destination changes and rule publishes): in SQLite mode its write to the WAL file, on
      // PostgreSQL its NOTIFY, heard only while the listening connection is up (else the
      // tick stays at a second). On PostgreSQL the slowed ticks are quiet besides: the idle
      // looks at the store (the fan-out's, the lanes', the destinations' and the rule
      // revision's re-reads) wait for an announcement, a due time they know, or the safety
      // read every HEARD_POLL_MS. src/delivery/README.md, "Idle".
      const announced = store.kind === 'sqlite'
        ? { announcedBy: sqliteWalFile(config) }
        : store.watchAnnouncements && { announcer: store.watchAnnouncements.bind(store), heardPollMs: HEARD_POLL_MS };
      if (announced) slowWhenIdle({ ...announced, ...config.idleTick, logger });
    };
    await startWhenRulesValid(rules, begin, logger);
    return { rules, store, pool };
  })();

  start.then(() => post({ t: 'ready' }), (err: Error) => {
    logger.error({ err }, 'delivery thread failed to start');
    post({ t: 'failed', message: err.message });
  });

  port.on('message', (m: ToDeliveryThread) => {
    if (m.t === 'wake') delivery?.dispatcher.wake();
    else if (m.t === 'ping') post({ t: 'pong' });
    else if (m.t === 'crash') setImmediate(() => { throw new Error('delivery thread crash requested'); });
    else if (m.t === 'metrics') {
      registry.metrics().then((text) => post({ t: 'metrics', id: m.id, text }), () => post({ t: 'metrics', id: m.id, text: '' }));
    } else if (m.t === 'stop') {
      stopping = true;
      void (async () => {
        try {
          const parts = await start;
          await delivery?.stop(m.graceMs);
          parts.rules.close();
          await parts.pool.close();
          await parts.store.close();
        } catch (err) {
          logger.error({ err }, 'delivery thread stopped with an error');
        }
        post({ t: 'stopped' });
        port.close();
      })();
    }
  });
}
