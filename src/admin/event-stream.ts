// GET /admin/stream: the intake feed as Server-Sent Events, filtered per client. The HTTP
// thread serves intake too, so a stream must cost it little: one feed subscription for all
// clients, each message serialised once (and only when some client wants it), a client
// over its byte budget skipped before anything is formatted for it (its misses counted and
// told once it catches up), and the number of streams capped in total and per client
// address (429 beyond). Streams end when the service drains for shutdown.
import { PassThrough } from 'node:stream';
import type { IntakeFeed, IntakeMessage } from '../intake/intake-feed.ts';
import type { AppContext } from '../http/types.ts';
import { AppError } from '../errors.ts';

/** Bytes queued for one client before its messages are dropped (counted). */
const MAX_QUEUED_BYTES = 1024 * 1024;
const KEEP_ALIVE_MS = 15_000;
const KEEP_ALIVE = Buffer.from(': keep-alive\n\n');

export interface StreamFilter {
  scriptId?: string;
  status?: string;
  name?: string;
}

export interface StreamLimits {
  /** Streams open at once, in all (ADMIN_STREAMS_MAX). */
  max: number;
  /** Streams open at once from one client address (ADMIN_STREAMS_PER_ADDRESS). */
  perAddress: number;
  keepAliveMs?: number;
}

export interface EventStreams {
  /** Opens a stream on ctx, or throws 429 RATE_LIMITED when the limits are reached. */
  open(ctx: AppContext, filter: StreamFilter): void;
  /** Streams open now. */
  count(): number;
  /** Ends every open stream (shutdown). */
  closeAll(): void;
}

interface Client {
  filter: StreamFilter;
  out: PassThrough;
  missed: number;
  end(): void;
}

const matches = (f: StreamFilter, m: IntakeMessage): boolean =>
  (f.scriptId === undefined || m.script_id === f.scriptId) &&
  (f.status === undefined || m.status === f.status) &&
  (f.name === undefined || m.name === f.name);

/** Writes `frame` unless the client is over budget; then counts it instead. */
function deliver(c: Client, frame: () => Buffer): void {
  if (c.out.writableLength > MAX_QUEUED_BYTES) {
    c.missed++;
    return;
  }
  if (c.missed > 0) {
    c.out.write(`event: overflow\ndata: ${JSON.stringify({ missed: c.missed })}\n\n`);
    c.missed = 0;
  }
  c.out.write(frame());
}

export function createEventStreams(feed: IntakeFeed, limits: StreamLimits): EventStreams {
  const clients = new Set<Client>();
  const byAddress = new Map<string, number>();
  let unsubscribe: (() => void) | null = null;
  let keepAlive: NodeJS.Timeout | null = null;

  function broadcast(m: IntakeMessage): void {
    let frame: Buffer | null = null;
    const once = (): Buffer => (frame ??= Buffer.from(`event: intake\ndata: ${JSON.stringify(m)}\n\n`));
    for (const c of clients) if (matches(c.filter, m)) deliver(c, once);
  }

  // The feed and the keep-alive timer exist only while someone listens.
  function listen(): void {
    if (unsubscribe !== null) return;
    unsubscribe = feed.subscribe(broadcast);
    keepAlive = setInterval(() => {
      for (const c of clients) deliver(c, () => KEEP_ALIVE);
    }, limits.keepAliveMs ?? KEEP_ALIVE_MS);
    keepAlive.unref();
  }
  function stopIfIdle(): void {
    if (clients.size > 0 || unsubscribe === null) return;
    unsubscribe();
    unsubscribe = null;
    if (keepAlive) clearInterval(keepAlive);
    keepAlive = null;
  }

  return {
    open(ctx, filter) {
      const address = ctx.ip || 'unknown';
      const fromHere = byAddress.get(address) ?? 0;
      if (clients.size >= limits.max || fromHere >= limits.perAddress) {
        const which = clients.size >= limits.max ? `${limits.max} live streams are open (ADMIN_STREAMS_MAX)` : `${limits.perAddress} live streams are open from this address (ADMIN_STREAMS_PER_ADDRESS)`;
        throw new AppError('RATE_LIMITED', 429, `${which}; close one or retry later`, { retryAfter: 5 });
      }
      byAddress.set(address, fromHere + 1);
      const out = new PassThrough();
      let ended = false;
      const client: Client = {
        filter,
        out,
        missed: 0,
        end() {
          if (ended) return;
          ended = true;
          clients.delete(client);
          const left = (byAddress.get(address) ?? 1) - 1;
          if (left <= 0) byAddress.delete(address);
          else byAddress.set(address, left);
          stopIfIdle();
          out.end();
        },
      };
      clients.add(client);
      listen();
      ctx.req.on('close', client.end);
      ctx.req.socket.setTimeout(0);
      ctx.set('Content-Type', 'text/event-stream; charset=utf-8');
      ctx.set('Cache-Control', 'no-store');
      ctx.set('X-Accel-Buffering', 'no');
      ctx.status = 200;
      ctx.body = out;
      // The first bytes go out at once, so the client knows the stream is open.
      out.write(`retry: 2000\n: connected\n\n`);
    },
    count: () => clients.size,
    closeAll() {
      for (const c of [...clients]) c.end();
    },
  };
}
