// A real HTTP server on 127.0.0.1:0 standing in for a destination. It records every
// request it receives and every socket opened to it, so tests can assert what reached it.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface Hit {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, hit: Hit) => void;

export interface DestinationDouble {
  port: number;
  /** `http://127.0.0.1:<port><path>` */
  url(path?: string): string;
  hits: Hit[];
  /** Sockets ever accepted (TCP connections). */
  connections: number;
  /** Accepted sockets that have since closed. */
  closedConnections: number;
  close(): Promise<void>;
}

export async function startDouble(handler: Handler): Promise<DestinationDouble> {
  const sockets = new Set<Socket>();
  const double = {
    port: 0,
    url: (path = '/') => `http://127.0.0.1:${double.port}${path}`,
    hits: [] as Hit[],
    connections: 0,
    closedConnections: 0,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const hit = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      double.hits.push(hit);
      handler(req, res, hit);
    });
  });
  server.keepAliveTimeout = 30_000;
  server.on('connection', (socket: Socket) => {
    double.connections++;
    sockets.add(socket);
    socket.on('close', () => {
      double.closedConnections++;
      sockets.delete(socket);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  double.port = (server.address() as AddressInfo).port;
  return double;
}

/** Resolves once `condition()` holds; rejects after `timeoutMs`. Polls, never asserts on time. */
export async function until(condition: () => boolean, timeoutMs = 3_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A port nothing listens on: bound once, then released. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
