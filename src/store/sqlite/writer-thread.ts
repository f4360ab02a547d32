// The event writer thread: the append transaction (append-events.ts) runs in a worker
// thread on its own connection, so the main event loop keeps serving requests while SQLite
// inserts and fsyncs. The main thread posts a batch and awaits the reply.
//
// Failure handling, so that a batch is always settled and never hangs:
// - a transaction error (SQLITE_BUSY, SQLITE_FULL, …) comes back as a reply and rejects
//   that batch only;
// - a thread that dies (uncaught error, out of memory) rejects every batch it
//   held; a batch rejected that way may or may not have committed, like a process killed
//   between commit and acknowledgement — the client retries and dedup keeps one copy;
// - a batch without a reply within `replyTimeoutMs` (a disk that stopped answering) is
//   rejected; a late reply is ignored. The thread is left to finish: it is never
//   terminated while it may be inside a SQLite call, because better-sqlite3 aborts the
//   whole process when a statement fails during worker termination
//   (WiseLibs/better-sqlite3#842; seen here as "FATAL ERROR: v8::ToLocalChecked Empty
//   MaybeLocal" from Database::ThrowSqliteError);
// - a dead thread is replaced at once, except one that died before it was ready (a
//   start-up failure would only repeat): then the next batch starts a new one.
import { withWriteGate } from './write-gate.ts';
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { runsCompiled, siblingModule } from '../../build-state.cjs';
import type { EventStatus } from '../types.ts';
import type { PreparedRow } from '../prepare-row.ts';
import type { FromWriter, ToWriter, WireError, WriterWorkerData } from './writer-worker.ts';
import type { WalBound } from './wal-checkpoints.ts';
import { workerResourceLimits } from '../../workers/worker-options.ts';

export interface WriterThreadOptions {
  file: string;
  busyTimeoutMs: number;
  dedupWindowMs: number;
  /** A batch with no reply after this long is rejected. Default: busy timeout + 30 s. */
  replyTimeoutMs?: number;
  /** The WAL's bound, kept by the thread (wal-checkpoints.ts). */
  wal?: WalBound;
}

export interface WriterThread {
  /** Commits the rows in one transaction on the writer thread; resolves with their statuses. */
  append(rows: readonly PreparedRow[]): Promise<EventStatus[]>;
  /** Waits for batches in flight, then ends the thread. Later appends are refused. */
  close(): Promise<void>;
  /** Threads started so far: 1 + restarts (0 before the first). */
  readonly starts: number;
  /** Thread id of the current writer thread, if one runs. */
  readonly threadId: number | undefined;
  /**
   * Makes the current thread die of an uncaught error once it has handled what was posted
   * before; batches posted after it are lost with it (for tests). Resolves when it has exited.
   */
  crash(): Promise<void>;
}

// From the build (dist/) the compiled ES module starts the thread; among the sources, the .cjs
// entry that registers tsx's require hook first.
const ENTRY = runsCompiled(import.meta.url) ? siblingModule(import.meta.url, 'writer-worker-main') : fileURLToPath(new URL('./writer-worker.cjs', import.meta.url));
const CLOSE_GRACE_MS = 5000;

interface Pending {
  resolve(statuses: EventStatus[]): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
}

/** One worker and the batches it holds. */
interface Slot {
  worker: Worker;
  pending: Map<number, Pending>;
  ready: boolean;
  ended: boolean;
  /** The error the thread died of, when it threw. */
  error?: Error;
  exited: Promise<void>;
  /** Called whenever `pending` becomes empty or the slot ends. */
  onIdle?: () => void;
}

function fromWire(w: WireError): Error {
  const e = new Error(w.message);
  e.name = w.name;
  if (w.code !== undefined) Object.assign(e, { code: w.code });
  if (w.stack !== undefined) e.stack = w.stack;
  return e;
}

export function startWriterThread(opts: WriterThreadOptions): WriterThread {
  const replyTimeoutMs = opts.replyTimeoutMs ?? opts.busyTimeoutMs + 30_000;
  const workerData: WriterWorkerData = { file: opts.file, busyTimeoutMs: opts.busyTimeoutMs, dedupWindowMs: opts.dedupWindowMs, wal: opts.wal };
  let current: Slot | undefined;
  let starts = 0;
  let seq = 0;
  let closing: Promise<void> | undefined;

  function spawn(): Slot {
    // No flags: the entry registers tsx itself, and flags valid for the process (such as
    // --max-old-space-size) are refused by Worker when passed explicitly.
    const worker = withWriteGate(() => new Worker(ENTRY, { workerData, execArgv: [], name: 'tracklane event writer', resourceLimits: workerResourceLimits() }));
    starts++;
    let exited!: () => void;
    const slot: Slot = { worker, pending: new Map(), ready: false, ended: false, exited: new Promise((r) => (exited = r)) };
    worker.on('message', (m: FromWriter) => {
      if (m.type === 'ready') {
        slot.ready = true;
        return;
      }
      const p = slot.pending.get(m.id);
      if (p === undefined) return;
      slot.pending.delete(m.id);
      clearTimeout(p.timer);
      idleCheck(slot);
      if (m.type === 'done') p.resolve(m.statuses);
      else p.reject(fromWire(m.error));
    });
    worker.on('error', (e) => (slot.error = e));
    worker.on('exit', (code) => {
      const why = slot.error ? `: ${slot.error.message}` : '';
      end(slot, new Error(`event writer thread exited with code ${code}${why}`, { cause: slot.error }));
      exited();
    });
    // The thread keeps the process alive only while it holds a batch.
    worker.unref();
    return slot;
  }

  function idleCheck(slot: Slot): void {
    if (slot.pending.size > 0) return;
    slot.worker.unref();
    slot.onIdle?.();
  }

  /** Rejects the slot's batches; replaces the thread unless closing or it never got ready. */
  function end(slot: Slot, err: Error): void {
    if (slot.ended) return;
    slot.ended = true;
    for (const p of slot.pending.values()) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    slot.pending.clear();
    slot.onIdle?.();
    if (current === slot) {
      current = undefined;
      if (closing === undefined && slot.ready) {
        try {
          current = spawn();
        } catch {
          // The next append tries again and rejects with the reason.
        }
      }
    }
  }

  return {
    get starts() {
      return starts;
    },
    get threadId() {
      return current?.worker.threadId;
    },
    append(rows) {
      if (closing !== undefined) return Promise.reject(new Error('the event store is closed'));
      if (rows.length === 0) return Promise.resolve([]);
      const slot = (current ??= spawn());
      const id = ++seq;
      return new Promise<EventStatus[]>((resolve, reject) => {
        const timer = setTimeout(() => {
          slot.pending.delete(id);
          idleCheck(slot);
          reject(new Error(`event writer thread gave no reply in ${replyTimeoutMs} ms`));
        }, replyTimeoutMs);
        slot.pending.set(id, { resolve, reject, timer });
        slot.worker.ref();
        try {
          slot.worker.postMessage({ type: 'append', id, rows } satisfies ToWriter);
        } catch (e) {
          slot.pending.delete(id);
          clearTimeout(timer);
          idleCheck(slot);
          reject(e);
        }
      });
    },
    async crash() {
      const slot = current;
      if (slot === undefined) return;
      slot.worker.postMessage({ type: 'crash' } satisfies ToWriter);
      await slot.exited;
    },
    close() {
      closing ??= (async () => {
        const slot = current;
        if (slot === undefined) return;
        slot.worker.ref();
        if (!slot.ended && slot.pending.size > 0) await new Promise<void>((r) => (slot.onIdle = r));
        if (!slot.ended) {
          slot.worker.postMessage({ type: 'close' } satisfies ToWriter);
          // Never terminated (see above): a thread still stuck in a batch that timed out is
          // left behind after the grace period rather than killed inside a SQLite call.
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([slot.exited, new Promise<void>((r) => (timer = setTimeout(r, CLOSE_GRACE_MS)))]);
          clearTimeout(timer);
          slot.worker.unref();
        }
        current = undefined;
      })();
      return closing;
    },
  };
}
