// The writer thread's side (see writer-thread.ts): its own connection to the store's
// file, opened with the same pragmas, running the same append transaction as the
// in-process path, one batch at a time, and replying with the statuses or the error.
// Loaded through tsx's require hook (writer-worker.cjs), as are its imports: no top-level
// await anywhere below here.
import { parentPort, workerData } from 'node:worker_threads';
import type { EventStatus } from '../types.ts';
import { createAppender } from './append-events.ts';
import type { PreparedRow } from '../prepare-row.ts';
import { openConnection } from './connection.ts';
import { startWalCheckpoints, type WalBound } from './wal-checkpoints.ts';

export interface WriterWorkerData {
  file: string;
  busyTimeoutMs: number;
  dedupWindowMs: number;
  wal?: WalBound;
}

/** What the main thread posts. */
export type ToWriter =
  | { type: 'append'; id: number; rows: readonly PreparedRow[] }
  /** Close the connection and end the thread; sent once no batch is in flight. */
  | { type: 'close' }
  /** Die of an uncaught error, as a bug would (tests of crash handling). */
  | { type: 'crash' };

/** An error as it crosses the thread boundary (structured clone drops `code`). */
export interface WireError { name: string; message: string; code?: string; stack?: string }

/** What the thread posts back. */
export type FromWriter =
  | { type: 'ready' }
  | { type: 'done'; id: number; statuses: EventStatus[] }
  | { type: 'failed'; id: number; error: WireError };

function toWire(e: unknown): WireError {
  if (e instanceof Error) {
    const code = (e as { code?: unknown }).code;
    return { name: e.name, message: e.message, code: typeof code === 'string' ? code : undefined, stack: e.stack };
  }
  return { name: 'Error', message: String(e) };
}

/** Runs the writer in this worker thread. A failure to open the database is thrown (the thread ends with it). */
export function runWriterWorker(): void {
  const port = parentPort;
  if (port === null) throw new Error('runWriterWorker() must run in a worker thread');
  const data = workerData as WriterWorkerData;
  const db = openConnection(data.file, data.busyTimeoutMs, data.wal?.limitBytes);
  const append = createAppender(db, data.dedupWindowMs);
  // The thread that commits intake also bounds the WAL, off the HTTP thread.
  const stopCheckpoints = startWalCheckpoints(db, data.file, data.wal);
  port.on('message', (m: ToWriter) => {
    if (m.type === 'close') {
      stopCheckpoints();
      db.close();
      port.close();
      return;
    }
    if (m.type === 'crash') throw new Error('crash requested');
    let reply: FromWriter;
    try {
      reply = { type: 'done', id: m.id, statuses: append(m.rows) };
    } catch (e) {
      reply = { type: 'failed', id: m.id, error: toWire(e) };
    }
    port.postMessage(reply);
  });
  port.postMessage({ type: 'ready' } satisfies FromWriter);
}
