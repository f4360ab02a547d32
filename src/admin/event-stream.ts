// GET /admin/stream: the intake feed as Server-Sent Events, filtered per client. A client
// that reads too slowly is not allowed to grow the server's memory: past a byte budget its
// messages are counted instead of queued, and it is told how many it missed once it
// catches up. Streams end when the service drains for shutdown.
import { PassThrough } from 'node:stream';
import type { IntakeFeed, IntakeMessage } from '../intake/intake-feed.ts';
import type { AppContext } from '../http/types.ts';

/** Bytes queued for one client before its messages are dropped (counted). */
const MAX_QUEUED_BYTES = 1024 * 1024;
const KEEP_ALIVE_MS = 15_000;

export interface StreamFilter {
  scriptId?: string;
  status?: string;
  name?: string;
}

export interface EventStreams {
  open(ctx: AppContext, filter: StreamFilter): void;
  /** Ends every open stream (shutdown). */
  closeAll(): void;
}

export function createEventStreams(feed: IntakeFeed, keepAliveMs = KEEP_ALIVE_MS): EventStreams {
  const open = new Set<() => void>();
  return {
    open(ctx, filter) {
      const out = new PassThrough();
      let missed = 0;
      const send = (chunk: string): void => {
        if (out.writableLength > MAX_QUEUED_BYTES) {
          missed++;
          return;
        }
        if (missed > 0) {
          out.write(`event: overflow\ndata: ${JSON.stringify({ missed })}\n\n`);
          missed = 0;
        }
        out.write(chunk);
      };
      const matches = (m: IntakeMessage): boolean =>
        (filter.scriptId === undefined || m.script_id === filter.scriptId) &&
        (filter.status === undefined || m.status === filter.status) &&
        (filter.name === undefined || m.name === filter.name);
      const unsubscribe = feed.subscribe((m) => {
        if (matches(m)) send(`event: intake\ndata: ${JSON.stringify(m)}\n\n`);
      });
      const timer = setInterval(() => send(': keep-alive\n\n'), keepAliveMs);
      timer.unref();
      let ended = false;
      const end = (): void => {
        if (ended) return;
        ended = true;
        unsubscribe();
        clearInterval(timer);
        open.delete(end);
        out.end();
      };
      open.add(end);
      ctx.req.on('close', end);
      ctx.req.socket.setTimeout(0);
      ctx.set('Content-Type', 'text/event-stream; charset=utf-8');
      ctx.set('Cache-Control', 'no-store');
      ctx.set('X-Accel-Buffering', 'no');
      ctx.status = 200;
      ctx.body = out;
      // The first bytes go out at once, so the client knows the stream is open.
      out.write(`retry: 2000\n: connected\n\n`);
    },
    closeAll() {
      for (const end of [...open]) end();
    },
  };
}
