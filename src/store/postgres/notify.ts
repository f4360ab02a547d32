// LISTEN/NOTIFY: a commit that adds work notifies WORK_CHANNEL with what it added ('events':
// an intake commit, for the fan-out; 'deliveries': rows due for the send lanes), and every
// instance wakes what that work needs at once instead of at its next poll: an intake commit
// wakes each instance's fan-out only, not its every lane (with N instances, each commit
// woke N × lanes claim queries). Rule publishes and destination changes notify
// CHANGES_CHANNEL: no work, only what polls would otherwise see late, so those go to watch()
// alone (an idle delivery thread's slowed tick back on the second, poll-tick.ts; the HTTP
// thread's rule revision read, announced-poll.ts) — a notifier listening to that channel
// alone hears no intake commit.
// One dedicated connection per notifier, reconnected with backoff when the server
// drops it; polling stays the fallback, so a lost notification only delays work, and a
// watcher hears of the loss at once (its polls go back to their one-second tick).
import pg from 'pg';
import type { WorkKind } from '../types.ts';

export const WORK_CHANNEL = 'tracklane_work';

/** The payload an intake commit notifies with; anything else (a delivery change) is 'deliveries'. */
export const EVENTS_PAYLOAD = 'events';

/** The channel of rule publishes and destination changes (see the top). */
export const CHANGES_CHANNEL = 'tracklane_changes';

/** The statement that announces a rule publish or destination change (at COMMIT when run in a transaction). */
export const NOTIFY_CHANGES = `NOTIFY ${CHANGES_CHANNEL}`;

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

/** `channels`: what it listens to; onWork() hears only WORK_CHANNEL's notifications. */
export function createNotifier(url: string, onError?: (err: Error) => void, channels: readonly string[] = [WORK_CHANNEL, CHANGES_CHANNEL]): Notifier {
  const listeners = new Set<(kind: WorkKind) => void>();
  const watchers = new Set<() => void>();
  let client: pg.Client | null = null;
  let connecting: Promise<void> | null = null;
  let closed = false;
  let retryMs = 250;
  let timer: NodeJS.Timeout | undefined;
  /** watch() was called: keep (re)connecting with backoff, as for a listener. */
  let watched = false;

  const connect = (): Promise<void> => (connecting ??= (async () => {
    // TCP keepalive: a connection the network lost without a word ends too (no timer here).
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000, keepAlive: true, keepAliveInitialDelayMillis: 10_000 });
    c.on('notification', (msg) => {
      // A copy: a watcher may watch again from its callback. None under load (the delivery thread watches only while idle).
      if (watchers.size > 0) for (const w of [...watchers]) w();
      if (msg.channel !== WORK_CHANNEL) return;
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
      await c.query(channels.map((ch) => `LISTEN ${ch}`).join('; '));
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
    schedule(); // first: a watcher that watches again from its callback does not connect at once
    for (const w of [...watchers]) w();
  }

  function schedule(): void {
    if (closed || timer || (listeners.size === 0 && !watched)) return;
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
      watched = true;
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
