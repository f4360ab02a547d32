// Sends one OutboundRequest over a shared undici Agent (keep-alive pools per origin) and
// reports a response or a classified error; it never throws for a remote outcome. It uses
// undici's dispatch API with its own handler: the response body is collected straight from
// the socket up to the byte cap, without the stream and async iterator of undici's
// request() (a tenth of the delivery thread's sending cost in the 20,000-event drain).
// SSRF: the URL is checked before dispatch — this also
// covers IP-literal hosts, for which undici skips `lookup` (undici#2019) — and every
// hostname is checked after DNS, on the addresses actually dialled. Redirects are never
// followed (no redirect interceptor), and body bytes and total time are capped (F 40–41).
// Every request carries `User-Agent: tracklane/<version>` (net/user-agent.ts).
import { Agent, errors, type Dispatcher } from 'undici';
import type { OutboundRequest, PlatformResponse } from '../destinations/types.ts';
import { checkDestinationUrl } from './ssrf-guard.ts';
import { createGuardedLookup, systemResolver, type Resolver } from './net/guarded-lookup.ts';
import { classifySendError, type SendErrorClass } from './net/classify-send-error.ts';
import { withUserAgent } from './net/user-agent.ts';
import { bodyBytes } from './net/body-bytes.ts';

export type { Resolver, ResolvedAddress } from './net/guarded-lookup.ts';
export type { SendErrorClass } from './net/classify-send-error.ts';

export interface HttpSenderOptions {
  /** ALLOW_PRIVATE_DESTINATIONS=1: loopback and private ranges may be dialled. */
  allowPrivate: boolean;
  /** TCP (and TLS) connect limit. Default 5 000 ms. */
  connectTimeoutMs?: number;
  /** Deadline for the whole attempt, connect to last body byte. Default 15 000 ms. */
  totalTimeoutMs?: number;
  /** Response body bytes kept; the rest is never read. Default 20 000 (as Svix). */
  maxResponseBytes?: number;
  /** Name resolution (tests inject one); every answer is checked before it is dialled. */
  lookup?: Resolver;
}

export type SendResult =
  | { kind: 'response'; response: PlatformResponse; latencyMs: number }
  | { kind: 'error'; errorClass: SendErrorClass; message: string; latencyMs: number };

export interface HttpSender {
  /**
   * One attempt. `signal` aborts it early (e.g. on shutdown): errorClass 'other'. `timeoutMs`
   * replaces the total timeout for this attempt (a destination's own, or a shortened one).
   */
  send(req: OutboundRequest, signal?: AbortSignal, timeoutMs?: number): Promise<SendResult>;
  /** Closes pooled connections once in-flight requests finish. */
  close(): Promise<void>;
}

interface Exchange {
  /** Settles with the response (body cut at the cap) or the error that ended the attempt. */
  done: Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>;
  /** Ends the attempt now: `done` rejects at once, and the request is dropped (before it starts, when it would start). */
  abort(): void;
}

/**
 * One request through `agent`: the body is kept up to `maxBytes`; past that the attempt
 * ends as a response with the bytes kept, and the connection is dropped so the rest is
 * never received.
 */
function exchange(agent: Agent, target: Target, req: OutboundRequest, maxBytes: number, timeoutMs: number): Exchange {
  let controller: Dispatcher.DispatchController | null = null;
  let aborted = false;
  let settled = false;
  let status = 0;
  let headers: Record<string, string | string[] | undefined> = {};
  const chunks: Buffer[] = [];
  let size = 0;
  let resolve!: (r: Awaited<Exchange['done']>) => void;
  let reject!: (e: unknown) => void;
  const done = new Promise<Awaited<Exchange['done']>>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  const finish = () => {
    if (settled) return;
    settled = true;
    resolve({ status, headers, body: Buffer.concat(chunks, size).toString('utf8') });
  };
  const fail = (err: unknown) => {
    if (settled) return;
    settled = true;
    reject(err);
  };
  const handler: Dispatcher.DispatchHandler = {
    onRequestStart(c) {
      controller = c;
      if (aborted) c.abort(new errors.RequestAbortedError());
    },
    onResponseStart(_c, statusCode, h) {
      // Called again after a 1xx informational answer: the last one is the response.
      status = statusCode;
      headers = h;
    },
    onResponseData(c, chunk) {
      if (settled) return;
      const room = maxBytes - size;
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room));
        size = maxBytes;
        finish();
        c.abort(new errors.RequestAbortedError('response body over the byte cap'));
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
    },
    onResponseEnd() {
      finish();
    },
    onResponseError(_c, err) {
      fail(err);
    },
  };
  agent.dispatch({
    // The body's bytes, encoded once: the attempt's record takes its size and digest from them (net/body-bytes.ts).
    origin: target.origin, path: target.path, method: req.method, headers: withUserAgent(req.headers), body: req.body === '' ? req.body : bodyBytes(req),
    headersTimeout: timeoutMs, bodyTimeout: timeoutMs,
  }, handler);
  return {
    done,
    abort() {
      if (aborted) return;
      aborted = true;
      fail(new errors.RequestAbortedError());
      controller?.abort(new errors.RequestAbortedError());
    },
  };
}

interface Target {
  origin: string;
  /** Path and query. */
  path: string;
}

/** A destination URL as checked and parsed once: why it is refused, or where to send. */
type CheckedUrl = { refused: string } | { refused: null; target: Target };

function checkUrl(url: string, allowPrivate: boolean): CheckedUrl {
  const refused = checkDestinationUrl(url, { allowPrivate });
  if (refused !== null) return { refused };
  const u = new URL(url);
  return { refused: null, target: { origin: u.origin, path: `${u.pathname}${u.search}` } };
}

/**
 * The attempts in flight per caller signal (a lane's, for its whole life), each ended when it
 * aborts: one listener per signal, instead of one added and removed per request.
 */
const inFlight = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `abort` when `signal` aborts, until the returned function is called. */
function whenAborted(signal: AbortSignal, abort: () => void): () => void {
  let attempts = inFlight.get(signal);
  if (attempts === undefined) {
    const all = new Set<() => void>();
    inFlight.set(signal, (attempts = all));
    signal.addEventListener('abort', () => {
      for (const end of [...all]) end();
      all.clear();
    }, { once: true });
  }
  const set = attempts;
  set.add(abort);
  return () => set.delete(abort);
}

function plainHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in raw) {
    if (!Object.hasOwn(raw, k)) continue;
    const v = raw[k];
    if (v === undefined) continue;
    const key = k.toLowerCase();
    const value = Array.isArray(v) ? v.join(', ') : v;
    // Defined, not assigned: a `__proto__` header stays a plain key.
    if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    else out[key] = value;
  }
  return out;
}

/**
 * @example
 * const sender = createHttpSender({ allowPrivate: config.allowPrivateDestinations });
 * const r = await sender.send(req);
 * if (r.kind === 'response') plugin.classifyResponse(r.response);
 */
export function createHttpSender(opts: HttpSenderOptions): HttpSender {
  const totalTimeoutMs = opts.totalTimeoutMs ?? 15_000;
  const maxResponseBytes = opts.maxResponseBytes ?? 20_000;
  const agent = new Agent({
    connect: {
      timeout: opts.connectTimeoutMs ?? 5_000,
      lookup: createGuardedLookup(opts.lookup ?? systemResolver, opts.allowPrivate),
    },
    headersTimeout: totalTimeoutMs,
    bodyTimeout: totalTimeoutMs,
  });

  /** Destination URLs repeat (one per destination) and the check is pure: each is checked and parsed once. */
  const checked = new Map<string, CheckedUrl>();
  const checkedUrl = (url: string): CheckedUrl => {
    let c = checked.get(url);
    if (c === undefined) {
      c = checkUrl(url, opts.allowPrivate);
      if (checked.size >= 1_000) checked.clear();
      checked.set(url, c);
    }
    return c;
  };

  async function send(req: OutboundRequest, signal?: AbortSignal, timeoutMs = totalTimeoutMs): Promise<SendResult> {
    const started = performance.now();
    const latencyMs = () => Math.round(performance.now() - started);

    const url = checkedUrl(req.url);
    if (url.refused !== null) return { kind: 'error', errorClass: 'blocked', message: `destination not allowed: ${url.refused}`, latencyMs: latencyMs() };
    if (signal?.aborted) return { kind: 'error', errorClass: 'other', message: 'request aborted', latencyMs: latencyMs() };

    let deadlineExceeded = false;
    let attempt: Exchange | undefined;
    const timer = setTimeout(() => {
      deadlineExceeded = true;
      attempt?.abort();
    }, timeoutMs);
    const unwatch = signal === undefined ? undefined : whenAborted(signal, () => attempt?.abort());
    try {
      // Inside the try: a request undici refuses outright (a header it will not send) is an attempt that failed.
      attempt = exchange(agent, url.target, req, maxResponseBytes, timeoutMs);
      const res = await attempt.done;
      // undici hands a kept-alive socket back to its pool after the turn that ends the
      // response; waiting that turn lets the next send to this origin reuse it.
      await new Promise(setImmediate);
      return { kind: 'response', response: { status: res.status, headers: plainHeaders(res.headers), body: res.body }, latencyMs: latencyMs() };
    } catch (err) {
      const callerAborted = !deadlineExceeded && signal?.aborted === true;
      return { kind: 'error', ...classifySendError(err, { deadlineExceeded, callerAborted }), latencyMs: latencyMs() };
    } finally {
      clearTimeout(timer);
      unwatch?.();
    }
  }

  return { send, close: () => agent.close() };
}
