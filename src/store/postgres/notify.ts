// LISTEN/NOTIFY: a commit that adds work notifies WORK_CHANNEL with what it added ('events':
// an intake commit, for the fan-out; 'deliveries': rows due for the send lanes), and every
// instance wakes what that work needs at once instead of at its next poll: an intake commit
// wakes each instance's fan-out only, not its every lane (with N instances, each commit
// woke N × lanes claim queries). Rule publishes and destination changes notify
// CHANGES_PAYLOAD: no work, only what an idle delivery thread's slowed polls would otherwise
// see late, so those go to watch() alone (poll-tick.ts: the slowed tick is back on the second).
// One dedicated connection per listener set, reconnected with backoff when the server
// drops it; polling stays the fallback, so a lost notification only delays work, and a
// watcher hears of the loss at once (its polls go back to their one-second tick).
import pg from 'pg';
import type { WorkKind } from '../types.ts';

export const WORK_CHANNEL = 'tracklane_work';

/** The payload an intake commit notifies with; anything else (a delivery change) is 'deliveries'. */
export const EVENTS_PAYLOAD = 'events';

/** The payload of a rule publish or destination change (see the top). */
export const CHANGES_PAYLOAD = 'changes';

/** The statement that announces a rule publish or destination change (at COMMIT when run in a transaction). */
export const NOTIFY_CHANGES = `NOTIFY ${WORK_CHANNEL}, '${CHANGES_PAYLOAD}'`;

export interface Notifier {
  /** Calls `listener` on each notification of WORK_CHANNEL, with its kind; returns the unsubscribe. */
  onWork(listener: (kind: WorkKind) => void): () => void;
  /**
   * Calls `onAnnounce` (later, never from within this call) on every notification, changes
   * included, and when the connection is lost; returns the stop, or null while not listening
   * (connecting then starts, if it had not).
   */
  watch(onAnnounce: () => void): (() => void) | null;
  close(): Promise<void>;
}

export function createNotifier(url: string, onError?: (err: Error) => void): Notifier {
  const listeners = new Set<(kind: WorkKind) => void>();
  const watchers = new Set<() => void>();
  let client: pg.Client | null = null;
  let connecting: Promise<void> | null = null;
  let closed = false;
  let retryMs = 250;
  let timer: NodeJS.Timeout | undefined;

  const connect = (): Promise<void> => (connecting ??= (async () => {
    // TCP keepalive: a connection the network lost without a word ends too (no timer here).
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000, keepAlive: true, keepAliveInitialDelayMillis: 10_000 });
    c.on('notification', (msg) => {
      for (const w of watchers) w();
      if (msg.payload === CHANGES_PAYLOAD) return;
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
    for (const w of watchers) w();
    schedule();
  }

  function schedule(): void {
    if (closed || timer || listeners.size + watchers.size === 0) return;
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
    watch(onAnnounce) {
      if (!client) {
        if (!connecting && !timer && !closed) void connect();
        return null;
      }
      const w = () => onAnnounce();
      watchers.add(w);
      return () => watchers.delete(w);
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      listeners.clear();
      watchers.clear();
      await connecting;
      const c = client;
      client = null;
      await c?.end().catch(() => undefined);
    },
  };
}
