// LISTEN/NOTIFY: a commit that adds work notifies WORK_CHANNEL with what it added ('events':
// an intake commit, for the fan-out; 'deliveries': rows due for the send lanes), and every
// instance wakes what that work needs at once instead of at its next poll: an intake commit
// wakes each instance's fan-out only, not its every lane (with N instances, each commit
// woke N × lanes claim queries).
// One dedicated connection per listener set, reconnected with backoff when the server
// drops it; polling stays the fallback, so a lost notification only delays work.
import pg from 'pg';
import type { WorkKind } from '../types.ts';

export const WORK_CHANNEL = 'tracklane_work';

/** The payload an intake commit notifies with; anything else (a delivery change) is 'deliveries'. */
export const EVENTS_PAYLOAD = 'events';

export interface Notifier {
  /** Calls `listener` on each notification of WORK_CHANNEL, with its kind; returns the unsubscribe. */
  onWork(listener: (kind: WorkKind) => void): () => void;
  close(): Promise<void>;
}

export function createNotifier(url: string, onError?: (err: Error) => void): Notifier {
  const listeners = new Set<(kind: WorkKind) => void>();
  let client: pg.Client | null = null;
  let connecting: Promise<void> | null = null;
  let closed = false;
  let retryMs = 250;
  let timer: NodeJS.Timeout | undefined;

  const connect = (): Promise<void> => (connecting ??= (async () => {
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    c.on('notification', (msg) => {
      const kind: WorkKind = msg.payload === EVENTS_PAYLOAD ? 'events' : 'deliveries';
      for (const l of listeners) l(kind);
    });
    c.on('error', (err) => {
      onError?.(err);
      drop(c);
    });
    c.on('end', () => drop(c));
    try {
      await c.connect();
      await c.query(`LISTEN ${WORK_CHANNEL}`);
      if (closed) {
        await c.end().catch(() => undefined);
        return;
      }
      client = c;
      retryMs = 250;
      // Work of either kind may have been announced while no one listened.
      for (const l of listeners) l('deliveries');
    } catch (err) {
      onError?.(err as Error);
      await c.end().catch(() => undefined);
      schedule();
    } finally {
      connecting = null;
    }
  })());

  function drop(c: pg.Client): void {
    if (client !== c) return;
    client = null;
    schedule();
  }

  function schedule(): void {
    if (closed || timer || listeners.size === 0) return;
    timer = setTimeout(() => {
      timer = undefined;
      void connect();
    }, retryMs);
    timer.unref();
    retryMs = Math.min(retryMs * 2, 10_000);
  }

  return {
    onWork(listener) {
      listeners.add(listener);
      if (!client && !connecting) void connect();
      return () => listeners.delete(listener);
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      listeners.clear();
      await connecting;
      const c = client;
      client = null;
      await c?.end().catch(() => undefined);
    },
  };
}
