// Delivery metrics, registered on the app's Prometheus registry: attempts by destination
// type and outcome, delivery state changes, queue depth and oldest pending age (set by the
// stats roll-up job, so a scrape never scans the queue), and ack-to-delivery lag.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { QueueSnapshot } from './types.ts';

export interface DeliveryMetrics {
  /** One per HTTP request; outcome success | retryable | permanent. */
  attempts: Counter<'destination_type' | 'outcome'>;
  /** Deliveries entering a state: delivered | retry | failed | dead. */
  deliveries: Counter<'destination_type' | 'status'>;
  /** Seconds from the event's acknowledgement to its delivery. */
  lag: Histogram<'destination_type'>;
  /** Applies a queue snapshot to the gauges. */
  setQueue(snapshot: QueueSnapshot, now: number): void;
}

/**
 * @example
 * const metrics = createMetrics();
 * const delivery = registerDeliveryMetrics(metrics.registry);
 * createDispatcher({ ..., metrics: delivery });
 */
export function registerDeliveryMetrics(registry: Registry): DeliveryMetrics {
  const registers = [registry];
  const queueDepth = new Gauge({
    name: 'tracklane_delivery_queue_depth',
    help: 'Pending deliveries by destination type',
    labelNames: ['destination_type'],
    registers,
  });
  const oldestPending = new Gauge({
    name: 'tracklane_delivery_oldest_pending_age_seconds',
    help: 'Age of the oldest pending delivery (since its event was acknowledged), by destination type',
    labelNames: ['destination_type'],
    registers,
  });
  const backlog = new Gauge({
    name: 'tracklane_dispatch_backlog_events',
    help: 'Accepted events not yet fanned out to their destinations',
    registers,
  });
  const paused = new Gauge({
    name: 'tracklane_destinations_paused',
    help: 'Destinations paused: failing with no success for PAUSE_AFTER_HOURS, or a receiver answered 410 Gone',
    registers,
  });
  const known = new Set<string>();
  return {
    attempts: new Counter({
      name: 'tracklane_delivery_attempts_total',
      help: 'HTTP delivery attempts by destination type and outcome',
      labelNames: ['destination_type', 'outcome'],
      registers,
    }),
    deliveries: new Counter({
      name: 'tracklane_deliveries_total',
      help: 'Deliveries entering a state after an attempt, by destination type (delivered, retry, failed, dead)',
      labelNames: ['destination_type', 'status'],
      registers,
    }),
    lag: new Histogram({
      name: 'tracklane_delivery_lag_seconds',
      help: 'Time from acknowledging an event to delivering it, by destination type',
      labelNames: ['destination_type'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21600, 86400],
      registers,
    }),
    setQueue(snapshot, now) {
      backlog.set(snapshot.dispatchBacklog);
      paused.set(snapshot.pausedDestinations);
      const seen = new Set<string>();
      for (const t of snapshot.byType) {
        seen.add(t.destinationType);
        known.add(t.destinationType);
        queueDepth.set({ destination_type: t.destinationType }, t.pending);
        oldestPending.set({ destination_type: t.destinationType }, t.oldestPendingAt === null ? 0 : Math.max(0, (now - t.oldestPendingAt) / 1000));
      }
      // A type whose queue emptied reads 0 rather than its last value.
      for (const type of known) {
        if (seen.has(type)) continue;
        queueDepth.set({ destination_type: type }, 0);
        oldestPending.set({ destination_type: type }, 0);
      }
    },
  };
}
