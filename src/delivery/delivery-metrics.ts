// Delivery metrics, registered on the app's Prometheus registry: attempts by destination
// type and outcome, delivery state changes, queue depth and oldest pending age by type and by
// destination, with each destination's overdue time and lagging state (set by the stats
// roll-up job, so a scrape never scans the queue), and ack-to-delivery lag.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { isLagging, overdueMs } from './lagging.ts';
import type { QueueSnapshot } from './types.ts';

export interface DeliveryMetrics {
  /** One per HTTP request; outcome success | retryable | permanent. */
  attempts: Counter<'destination_type' | 'outcome'>;
  /** Deliveries entering a state: delivered | retry | failed | dead. */
  deliveries: Counter<'destination_type' | 'status'>;
  /** Deliveries failed without an attempt because their event's mapping kept killing or stalling the delivery thread (poison.ts). */
  mappingFailed: Counter<'destination_type'>;
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
  const destLabels = ['destination_id', 'destination_type'] as const;
  const destOldest = new Gauge({
    name: 'tracklane_destination_oldest_pending_age_seconds',
    help: 'Age of a destination\'s oldest pending delivery (since its event was acknowledged)',
    labelNames: destLabels,
    registers,
  });
  const destOverdue = new Gauge({
    name: 'tracklane_destination_overdue_seconds',
    help: 'How long a destination\'s oldest due delivery has waited past its due time (0: nothing waiting)',
    labelNames: destLabels,
    registers,
  });
  const destLagging = new Gauge({
    name: 'tracklane_destination_lagging',
    help: '1 while an enabled, unpaused destination has work overdue by more than a minute: slower than its traffic',
    labelNames: destLabels,
    registers,
  });
  const known = new Set<string>();
  /** Label sets of destinations reported by the last roll-up, to drop those whose queue emptied. */
  let reported = new Map<string, { destination_id: string; destination_type: string }>();
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
    mappingFailed: new Counter({
      name: 'tracklane_deliveries_mapping_failed_total',
      help: 'Deliveries failed (mapping_failed) because mapping their event killed or stalled the delivery thread twice, by destination type',
      labelNames: ['destination_type'],
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
      const current = new Map<string, { destination_id: string; destination_type: string }>();
      for (const d of snapshot.byDestination) {
        const labels = { destination_id: d.destinationId, destination_type: d.destinationType };
        current.set(d.destinationId, labels);
        destOldest.set(labels, d.oldestPendingAt === null ? 0 : Math.max(0, (now - d.oldestPendingAt) / 1000));
        destOverdue.set(labels, overdueMs(d.nextDueAt, now) / 1000);
        destLagging.set(labels, isLagging(d, now) ? 1 : 0);
      }
      // A destination with nothing pending (or removed) has no series.
      for (const [id, labels] of reported) {
        if (current.has(id)) continue;
        for (const g of [destOldest, destOverdue, destLagging]) g.remove(labels);
      }
      reported = current;
    },
  };
}
