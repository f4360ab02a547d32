// What delivery is given by the server that starts it (src/delivery/start-delivery.ts), and
// what the dispatcher hands its fan-out loop: the store, the plugins, the rules, the hash
// pool, the logger and the metrics.
import type { PluginRegistry } from '../destinations/load-plugins.ts';
import type { RuleSet } from '../rules/rule-set.ts';
import type { Store } from '../store/types.ts';
import type { HashPool } from '../workers/pool.ts';
import type { DeliveryMetrics } from './delivery-metrics.ts';
import type { LaneLogger } from './types.ts';

export interface DeliveryParts {
  store: Store;
  plugins: PluginRegistry;
  /** The rule watcher (or anything with its `current()`). */
  rules: { current(): RuleSet };
  /** Hashes identifiers for a whole fan-out batch; null hashes inline. */
  pool: HashPool | null;
  logger: LaneLogger;
  metrics?: DeliveryMetrics;
}
