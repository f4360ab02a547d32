// The process's write gate: the threads of one server process that write to SQLite (the
// writer thread committing intake, the delivery thread's bookkeeping) take turns through
// this lock before BEGIN IMMEDIATE. Without it they meet only at SQLite's file lock, whose
// busy handler sleeps 1, 2, 5, 10, 15, 20, 25 … ms between tries: the writer thread, with
// every acknowledgement of its batch waiting on it, slept up to ~180 ms behind the
// delivery thread's fan-out commits under load. Here a waiting thread sleeps in
// Atomics.wait and is woken the moment the holder releases.
//
// Intake is urgent: while an urgent thread waits, others do not start a transaction, so the
// writer goes next rather than racing the delivery thread for every release.
//
// The gate only orders this process's own threads; SQLite's locking stays what makes
// writes safe (other processes, the CLI, a backup, connections that do not use the gate).
// So a wait that outlasts its bound (a holder stuck or gone) just goes ahead to SQLite,
// whose busy timeout then applies as before; nothing ever waits on the gate unbounded. The
// lock word holds the holder's thread id, so when a thread dies holding it (terminated, or
// out of memory inside a transaction) the thread that started it frees it on its exit.
import { getEnvironmentData, isMainThread, setEnvironmentData, threadId, type Worker } from 'node:worker_threads';

const KEY = 'tracklane:sqlite-write-gate';
/** [LOCK]: 0 free, else the holder's threadId + 1. [URGENT]: urgent threads waiting. */
const LOCK = 0;
const URGENT = 1;
/** A non-urgent thread re-checks at least this often while urgent ones wait (ms). */
const YIELD_MS = 5;

export interface WriteGate {
  /** Runs `fn` (a synchronous transaction) holding the gate, waiting at most `waitMs` for it. */
  run<T>(fn: () => T, opts: { urgent: boolean; waitMs: number }): T;
  /** Frees the gate if the thread `id` (a worker's threadId, taken before it exited) holds it; true if it did. */
  releaseHeldBy(id: number): boolean;
  /** Times this thread's `run` found the gate not free within its bound and went ahead without it. */
  readonly overruns: number;
}

/** A gate over its shared words (see LOCK, URGENT); `self`: this thread's id. */
export function writeGateOn(words: Int32Array, self = threadId): WriteGate {
  let overruns = 0;
  const mark = self + 1;
  function acquire(urgent: boolean, waitMs: number): boolean {
    const deadline = performance.now() + waitMs;
    if (urgent) Atomics.add(words, URGENT, 1);
    try {
      for (;;) {
        if (!urgent) {
          const waiting = Atomics.load(words, URGENT);
          if (waiting > 0) {
            const left = deadline - performance.now();
            if (left <= 0) return false;
            Atomics.wait(words, URGENT, waiting, Math.min(left, YIELD_MS));
            continue;
          }
        }
        const holder = Atomics.compareExchange(words, LOCK, 0, mark);
        if (holder === 0) return true;
        const left = deadline - performance.now();
        if (left <= 0) return false;
        Atomics.wait(words, LOCK, holder, left);
      }
    } finally {
      if (urgent) {
        Atomics.sub(words, URGENT, 1);
        Atomics.notify(words, URGENT);
      }
    }
  }
  return {
    run(fn, { urgent, waitMs }) {
      const held = acquire(urgent, waitMs);
      if (!held) overruns++;
      try {
        return fn();
      } finally {
        if (held) {
          Atomics.store(words, LOCK, 0);
          Atomics.notify(words, LOCK);
        }
      }
    },
    releaseHeldBy(id) {
      if (Atomics.compareExchange(words, LOCK, id + 1, 0) !== id + 1) return false;
      Atomics.notify(words, LOCK);
      return true;
    },
    get overruns() {
      return overruns;
    },
  };
}

let gate: WriteGate | undefined;

/**
 * This process's gate. The main thread creates the shared words and hands them to every
 * worker thread it starts afterwards (environment data is copied into new workers, and a
 * SharedArrayBuffer is shared, not copied), so all threads get the same gate.
 */
export function processWriteGate(): WriteGate {
  if (gate !== undefined) return gate;
  let shared = getEnvironmentData(KEY) as SharedArrayBuffer | undefined;
  if (!(shared instanceof SharedArrayBuffer)) {
    shared = new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT);
    // A worker that found none (started before the main thread made it) keeps a gate of its own.
    if (isMainThread) setEnvironmentData(KEY, shared);
  }
  gate = writeGateOn(new Int32Array(shared));
  return gate;
}

/**
 * Starts a worker thread that shares this process's gate: the gate is made before the thread
 * starts (it is handed over at start), and freed if the thread exits holding it.
 */
export function withWriteGate(start: () => Worker): Worker {
  const gate = processWriteGate();
  const worker = start();
  const id = worker.threadId; // -1 once it has exited
  worker.once('exit', () => gate.releaseHeldBy(id));
  return worker;
}
