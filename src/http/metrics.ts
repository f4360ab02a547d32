// Prometheus metrics, on a registry per app so two apps in one test process never
// share counters.
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { loopDelayMetricNames, registerLoopDelay, type LoopDelay } from './loop-delay.ts';

const PREFIX = 'tracklane_';
/**
 * prom-client's event-loop delay sampling, made never to run: its timer would fire in 24 days.
 * Its gauges are replaced by loop-delay.ts's, which sample only while the server serves.
 */
const NEVER_MS = 2 ** 31 - 1;

export interface Metrics {
  registry: Registry;
  requests: Counter<'route' | 'status'>;
  duration: Histogram<'route'>;
  validationFailures: Counter<'code'>;
  eventsStored: Counter<'status'>;
  commitBatch: Histogram<string>;
  /** The event-loop delay sampling, on while requests arrive (null without the default metrics). */
  loopDelay: LoopDelay | null;
}

export function createMetrics(opts: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  let loopDelay: LoopDelay | null = null;
  if (opts.defaultMetrics ?? true) {
    collectDefaultMetrics({ register: registry, prefix: PREFIX, eventLoopMonitoringPrecision: NEVER_MS });
    for (const name of loopDelayMetricNames(PREFIX)) registry.removeSingleMetric(name);
    loopDelay = registerLoopDelay(registry, PREFIX);
  }
  return {
    registry,
    loopDelay,
    requests: new Counter({
      name: 'tracklane_http_requests_total',
      help: 'HTTP requests by route and status code',
      labelNames: ['route', 'status'],
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'tracklane_http_request_duration_seconds',
      help: 'HTTP request latency by route',
      labelNames: ['route'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    validationFailures: new Counter({
      name: 'tracklane_validation_failures_total',
      help: 'Validation errors by code',
      labelNames: ['code'],
      registers: [registry],
    }),
    eventsStored: new Counter({
      name: 'tracklane_events_stored_total',
      help: 'Events committed to the store, by status',
      labelNames: ['status'],
      registers: [registry],
    }),
    commitBatch: new Histogram({
      name: 'tracklane_commit_batch_size',
      help: 'Events per group-commit transaction',
      buckets: [1, 2, 5, 10, 25, 50, 100, 250, 512],
      registers: [registry],
    }),
  };
}
