// A scriptable stand-in for a platform or webhook receiver: a real HTTP server on
// 127.0.0.1:0 that records every request (method, path, headers, raw body) and answers
// from a queue of scripted responses (status, headers, body, delay, hang, held), then a default.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ScriptedResponse {
  status?: number;
  headers?: Record<string, string>;
  /** A string is sent as is; anything else as JSON. */
  body?: unknown;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Never answer (the socket stays open until the double closes). */
  hang?: boolean;
  /** Answer once this settles (a receiver held until the test lets it go). */
  until?: Promise<unknown>;
}

export interface RecordedRequest {
  method: string;
  /** Path and query, as received. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** Date.now() when the body was complete. */
  at: number;
  /** The sender's TCP port (tells apart requests from several processes). */
  remotePort: number;
  json<T = any>(): T;
}

export type Responder = (req: RecordedRequest, index: number) => ScriptedResponse;

export interface DestinationDouble {
  /** `http://127.0.0.1:<port>` (no trailing slash). */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Queues responses for the next requests, in order. */
  script(...responses: ScriptedResponse[]): void;
  /** What to answer once the script is used up: a response, or a function of the request. Default 200 `{}`. */
  otherwise(r: ScriptedResponse | Responder): void;
  /** Resolves once `cond()` holds (polls); rejects after `timeoutMs` naming `what`. */
  waitFor(cond: () => boolean, timeoutMs?: number, what?: string): Promise<void>;
  close(): Promise<void>;
}

export async function startDestinationDouble(): Promise<DestinationDouble> {
  const requests: RecordedRequest[] = [];
  const queue: ScriptedResponse[] = [];
  let fallback: ScriptedResponse | Responder = { status: 200, body: {} };
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();

  const answer = (res: ServerResponse, r: ScriptedResponse): void => {
    if (r.hang) return;
    if (r.until) return void r.until.then(() => answer(res, { ...r, until: undefined }));
    const body = r.body === undefined ? '' : typeof r.body === 'string' ? r.body : JSON.stringify(r.body);
    const headers: Record<string, string> = { 'content-type': 'application/json', ...r.headers };
    const send = () => {
      if (!res.destroyed) res.writeHead(r.status ?? 200, headers).end(body);
    };
    if (r.delayMs) {
      const t = setTimeout(() => {
        timers.delete(t);
        send();
      }, r.delayMs);
      timers.add(t);
    } else send();
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const rec: RecordedRequest = {
        method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, at: Date.now(), remotePort: req.socket.remotePort ?? 0,
        json: () => JSON.parse(body),
      };
      const index = requests.push(rec) - 1;
      const next = queue.shift() ?? (typeof fallback === 'function' ? fallback(rec, index) : fallback);
      answer(res, next);
    });
  });
  server.keepAliveTimeout = 30_000;
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    requests,
    script: (...responses) => void queue.push(...responses),
    otherwise: (r) => void (fallback = r),
    async waitFor(cond, timeoutMs = 5_000, what = 'condition') {
      const deadline = Date.now() + timeoutMs;
      while (!cond()) {
        if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (${requests.length} requests so far)`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
