// The HTTP thread's event-loop delay gauges (`…nodejs_eventloop_lag_{min,max,mean,stddev,
// p50,p90,p99}_seconds`), sampled only while the server is serving. prom-client's default
// metrics sample the delay every 10 ms for the life of the process: a timer that wakes the
// thread 100 times a second when nothing else happens (most of an idle instance's CPU). These
// gauges keep prom-client's names, help and 10 ms samples, but the sampling starts with a
// request and stops LOOP_DELAY_IDLE_MS to twice that after the last one; a scrape with no sample since the
// one before (nothing was served meanwhile) reads 0.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Gauge, type Registry } from 'prom-client';

/** How often the loop is sampled while serving (prom-client's default precision). */
export const LOOP_DELAY_RESOLUTION_MS = 10;
/** Sampling stops this long (up to twice this long) after the last request. */
export const LOOP_DELAY_IDLE_MS = 10_000;

/** prom-client's gauges this replaces: its suffix, and its help. */
const GAUGES = [
  ['min', 'The minimum recorded event loop delay.', (h: Histogram) => h.min],
  ['max', 'The maximum recorded event loop delay.', (h: Histogram) => h.max],
  ['mean', 'The mean of the recorded event loop delays.', (h: Histogram) => h.mean],
  ['stddev', 'The standard deviation of the recorded event loop delays.', (h: Histogram) => h.stddev],
  ['p50', 'The 50th percentile of the recorded event loop delays.', (h: Histogram) => h.percentile(50)],
  ['p90', 'The 90th percentile of the recorded event loop delays.', (h: Histogram) => h.percentile(90)],
  ['p99', 'The 99th percentile of the recorded event loop delays.', (h: Histogram) => h.percentile(99)],
] as const;

type Histogram = ReturnType<typeof monitorEventLoopDelay>;

/** The names of the gauges, with the registry's prefix. */
export const loopDelayMetricNames = (prefix: string): string[] => GAUGES.map(([k]) => `${prefix}nodejs_eventloop_lag_${k}_seconds`);

export interface LoopDelay {
  /** A request arrived: sample (again) until LOOP_DELAY_IDLE_MS after the last one. */
  busy(): void;
  /** Whether the loop is being sampled now. */
  readonly sampling: boolean;
  /** Stops sampling for good. */
  close(): void;
}

/**
 * Registers the gauges on `registry` (whose prom-client defaults must not hold gauges of these
 * names: remove them first) and returns the switch the request middleware turns on.
 */
export function registerLoopDelay(registry: Registry, prefix: string, opts: { idleMs?: number; now?: () => number } = {}): LoopDelay {
  const idleMs = opts.idleMs ?? LOOP_DELAY_IDLE_MS;
  const now = opts.now ?? Date.now;
  const histogram = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
  let sampling = false;
  let lastBusy = 0;
  let timer: NodeJS.Timeout | undefined;

  /**
   * Ends the sampling once idleMs have passed since the last request; else looks again a whole
   * idleMs later (not when the last request's idleMs ends: a timer of whatever is left, often a
   * few ms, would wake an idle thread more often than its one-second tick). So the sampling
   * stops between idleMs and twice that after the last request.
   */
  const stopWhenIdle = () => {
    if (lastBusy + idleMs - now() > 0) {
      timer = setTimeout(stopWhenIdle, idleMs).unref();
      return;
    }
    timer = undefined;
    histogram.disable();
    sampling = false;
  };

  const gauges = GAUGES.map(([k, help], i) => new Gauge({
    name: `${prefix}nodejs_eventloop_lag_${k}_seconds`, help, registers: [registry],
    // The first gauge's collect sets them all (prom-client collects in registration order), then starts a new window.
    ...(i === 0 ? { collect: () => setAll() } : {}),
  }));
  function setAll(): void {
    const sampled = histogram.count > 0;
    GAUGES.forEach(([, , read], i) => gauges[i].set(sampled ? read(histogram) / 1e9 : 0));
    histogram.reset();
  }

  return {
    busy() {
      lastBusy = now();
      if (sampling) return;
      sampling = true;
      histogram.enable();
      timer = setTimeout(stopWhenIdle, idleMs).unref();
    },
    get sampling() {
      return sampling;
    },
    close() {
      clearTimeout(timer);
      timer = undefined;
      histogram.disable();
      sampling = false;
    },
  };
}
