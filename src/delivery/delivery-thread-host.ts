// The main thread's side of the delivery thread: runs delivery (in-delivery-thread.ts) on a
// worker thread of the server process, so the HTTP thread only takes events in. The thread
// has its own store connection, plugins, rules and hash pool; the two threads share nothing
// but the database file. The main thread:
// - wakes it when an intake commit adds work (at most one message per event-loop turn);
// - asks it for its Prometheus text on each /metrics scrape;
// - restarts it when it dies (its leases lapse and the new one takes the work over, as
//   after a crash), and stops it on shutdown, letting in-flight sends finish;
// - bounds its heap (DELIVERY_MEMORY_MB): a runaway mapping kills this thread alone
//   (ERR_WORKER_OUT_OF_MEMORY), never the process;
// - watches it (DELIVERY_WATCHDOG_MS, thread-watchdog.ts): a thread whose event loop stops
//   answering (a mapping stuck in a loop) is terminated and restarted like one that died.
// An event whose mapping kills or stalls the thread twice is then failed by the fan-out
// (`mapping_failed`, poison.ts) instead of being claimed again.
import { Worker } from 'node:worker_threads';
import { withWriteGate } from '../store/sqlite/write-gate.ts';
import { fileURLToPath } from 'node:url';
import { runsCompiled, siblingModule } from '../build-state.cjs';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { DeliveryThreadData, FromDeliveryThread, ToDeliveryThread } from './in-delivery-thread.ts';
import { workerResourceLimits } from '../workers/worker-options.ts';
import { startThreadWatchdog, type ThreadWatchdog } from './thread-watchdog.ts';

// From the build (dist/) the compiled ES module starts the thread; among the sources, the .cjs
// entry that registers tsx's require hook first. Both only call in-delivery-thread.ts
// runInDeliveryThread: the thread's code is there.
const ENTRY = runsCompiled(import.meta.url) ? siblingModule(import.meta.url, 'in-delivery-thread-main') : fileURLToPath(new URL('./in-delivery-thread.cjs', import.meta.url));
const RESTART_DELAY_MS = 1_000;
/** A scrape waits this long for the thread's metrics (a busy thread answers between tasks), then goes without them. */
const METRICS_WAIT_MS = 3_000;

export interface DeliveryThread {
  /** Resolves once the thread has started delivery (or waits for valid rules); rejects if it could not start. */
  readonly ready: Promise<void>;
  /** Tells the thread a commit added work (coalesced per event-loop turn). */
  wake(): void;
  /** The thread's Prometheus text ('' when it does not answer within METRICS_WAIT_MS). */
  metrics(): Promise<string>;
  /** Stops delivery (in-flight sends get `graceMs`) and ends the thread. */
  stop(graceMs?: number): Promise<void>;
  /** Threads started so far: 1 + restarts. */
  readonly starts: number;
  /** Tests: makes the current thread die of an uncaught error (it is then restarted). */
  crash(): void;
  /** Threads ended by the watchdog so far. */
  readonly stalls: number;
  /** The current thread's watchdog checks and pings so far (tests). */
  readonly watchdog: { readonly checks: number; readonly pings: number };
}

/**
 * @param opts.onDied called with the lease owner id of a thread that died, before its
 * replacement starts: the server hands that owner's leases back at once (the thread is gone,
 * so nothing of it is still sending) instead of leaving its work until the leases lapse.
 */
export function startDeliveryThread(opts: { config: Config; logger: Logger; onDied?: (owner: string) => Promise<unknown> }): DeliveryThread {
  let worker: Worker;
  let owner: string | undefined;
  let starts = 0;
  let stalls = 0;
  let watchdog: ThreadWatchdog | undefined;
  const watchMs = opts.config.deliveryWatchdogMs;
  let stopping: Promise<void> | undefined;
  let wakePosted = false;
  let nextId = 0;
  const waiting = new Map<number, (text: string) => void>();
  let readyResolve!: () => void;
  let readyReject!: (e: Error) => void;
  const ready = new Promise<void>((res, rej) => { readyResolve = res; readyReject = rej; });
  ready.catch(() => undefined);

  function spawn(): void {
    starts++;
    const data: DeliveryThreadData = { config: opts.config };
    const w = (worker = withWriteGate(() => new Worker(ENTRY, {
      workerData: data, stdout: false, stderr: false, resourceLimits: workerResourceLimits(opts.config.deliveryMemoryMb),
    })));
    // Armed by the thread's first message: loading its modules, plugins and rules is not a stall.
    const dog = (watchdog = startThreadWatchdog({
      watchMs,
      idleMs: () => w.performance.eventLoopUtilization().idle,
      ping: () => w.postMessage({ t: 'ping' } satisfies ToDeliveryThread),
      onStall: (silentMs) => {
        if (stopping) return;
        stalls++;
        opts.logger.error({ owner, silent_ms: silentMs }, `delivery thread stopped answering for over ${watchMs} ms (DELIVERY_WATCHDOG_MS); ending it`);
        void w.terminate();
      },
    }));
    worker.on('message', (m: FromDeliveryThread) => {
      dog.heard();
      if (m.t === 'ready') readyResolve();
      else if (m.t === 'owner') owner = m.owner;
      else if (m.t === 'failed') readyReject(new Error(`delivery thread failed to start: ${m.message}`));
      else if (m.t === 'metrics') {
        waiting.get(m.id)?.(m.text);
        waiting.delete(m.id);
      }
    });
    worker.on('error', (err) => opts.logger.error({ err }, 'delivery thread died'));
    worker.on('exit', (code) => {
      dog.stop();
      for (const resolve of waiting.values()) resolve('');
      waiting.clear();
      if (stopping) return;
      const dead = owner;
      owner = undefined;
      opts.logger.error({ code, owner: dead }, `delivery thread exited; restarting it in ${RESTART_DELAY_MS} ms`);
      setTimeout(() => {
        if (stopping) return;
        const handBack = dead !== undefined && opts.onDied ? opts.onDied(dead) : Promise.resolve();
        handBack.catch((err: unknown) => opts.logger.error({ err, owner: dead }, 'handing back the dead delivery thread\'s leases failed; they lapse instead'))
          .finally(() => { if (!stopping) spawn(); });
      }, RESTART_DELAY_MS).unref();
    });
  }
  spawn();

  const post = (m: ToDeliveryThread) => worker.postMessage(m);
  return {
    ready,
    get starts() {
      return starts;
    },
    get stalls() {
      return stalls;
    },
    get watchdog() {
      return { checks: watchdog?.checks ?? 0, pings: watchdog?.pings ?? 0 };
    },
    crash() {
      post({ t: 'crash' });
    },
    // The message carries no event: the fan-out reads accepted events from the store (src/store/*/dispatch-queue.ts).
    // next (on the delivery thread): in-delivery-thread.ts runInDeliveryThread, its 'wake' message → dispatcher.wake().
    wake() {
      if (wakePosted || stopping) return;
      wakePosted = true;
      setImmediate(() => {
        wakePosted = false;
        post({ t: 'wake' });
      });
    },
    metrics() {
      if (stopping) return Promise.resolve('');
      const id = ++nextId;
      return new Promise<string>((resolve) => {
        const timer = setTimeout(() => { waiting.delete(id); resolve(''); }, METRICS_WAIT_MS);
        waiting.set(id, (text) => { clearTimeout(timer); resolve(text); });
        post({ t: 'metrics', id });
      });
    },
    stop(graceMs = 5_000) {
      stopping ??= new Promise<void>((resolve) => {
        const w = worker;
        if (w.threadId === -1) return resolve();
        // After 'stopped' the thread has closed its store: ending it can no longer
        // interrupt a SQLite call. Past the grace (+ margin) it is ended regardless.
        const timer = setTimeout(() => void w.terminate(), graceMs + 5_000);
        w.once('exit', () => { clearTimeout(timer); resolve(); });
        w.on('message', (m: FromDeliveryThread) => { if (m.t === 'stopped') void w.terminate(); });
        w.postMessage({ t: 'stop', graceMs } satisfies ToDeliveryThread);
      });
      return stopping;
    },
  };
}
