// Sends one OutboundRequest over a shared undici Agent (keep-alive pools per origin) and
// reports a response or a classified error; it never throws for a remote outcome.
// SSRF: the URL is checked before dispatch — this also
// covers IP-literal hosts, for which undici skips `lookup` (undici#2019) — and every
// hostname is checked after DNS, on the addresses actually dialled. Redirects are never
// followed (no redirect interceptor), and body bytes and total time are capped (F 40–41).
import { Agent, request } from 'undici';
import type { Readable } from 'node:stream';
import type { OutboundRequest, PlatformResponse } from '../destinations/types.ts';
import { checkDestinationUrl } from './ssrf-guard.ts';
import { createGuardedLookup, systemResolver, type Resolver } from './net/guarded-lookup.ts';
import { classifySendError, type SendErrorClass } from './net/classify-send-error.ts';

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
  /** One attempt. `signal` aborts it early (e.g. on shutdown): errorClass 'other'. */
  send(req: OutboundRequest, signal?: AbortSignal): Promise<SendResult>;
  /** Closes pooled connections once in-flight requests finish. */
  close(): Promise<void>;
}

/** Reads at most `max` bytes, then destroys the stream so the rest is never received. */
async function readCapped(body: Readable, max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      const room = max - size;
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room));
        break; // leaving the loop destroys the stream (and its socket)
      }
      chunks.push(chunk);
      size += chunk.length;
    }
  } finally {
    if (!body.readableEnded) body.destroy();
  }
  return Buffer.concat(chunks).toString('utf8');
}

function plainHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  // fromEntries defines own properties, so a `__proto__` header stays a plain key.
  return Object.fromEntries(
    Object.entries(raw)
      .filter((e): e is [string, string | string[]] => e[1] !== undefined)
      .map(([k, v]) => [k.toLowerCase(), Array.isArray(v) ? v.join(', ') : v]),
  );
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

  async function send(req: OutboundRequest, signal?: AbortSignal): Promise<SendResult> {
    const started = performance.now();
    const latencyMs = () => Math.round(performance.now() - started);

    const refused = checkDestinationUrl(req.url, { allowPrivate: opts.allowPrivate });
    if (refused) return { kind: 'error', errorClass: 'blocked', message: `destination not allowed: ${refused}`, latencyMs: latencyMs() };
    if (signal?.aborted) return { kind: 'error', errorClass: 'other', message: 'request aborted', latencyMs: latencyMs() };

    const abort = new AbortController();
    let deadlineExceeded = false;
    const timer = setTimeout(() => {
      deadlineExceeded = true;
      abort.abort();
    }, totalTimeoutMs);
    const onCallerAbort = () => abort.abort();
    signal?.addEventListener('abort', onCallerAbort, { once: true });
    try {
      const res = await request(req.url, {
        dispatcher: agent,
        method: req.method,
        headers: req.headers,
        body: req.body,
        signal: abort.signal,
      });
      const body = await readCapped(res.body, maxResponseBytes);
      const result: SendResult = { kind: 'response', response: { status: res.statusCode, headers: plainHeaders(res.headers), body }, latencyMs: latencyMs() };
      // undici hands a kept-alive socket back to its pool one event-loop turn after the
      // body ends; waiting that turn lets the next send to this origin reuse it.
      if (res.body.readableEnded) await new Promise(setImmediate);
      return result;
    } catch (err) {
      const callerAborted = !deadlineExceeded && signal?.aborted === true;
      return { kind: 'error', ...classifySendError(err, { deadlineExceeded, callerAborted }), latencyMs: latencyMs() };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onCallerAbort);
    }
  }

  return { send, close: () => agent.close() };
}
