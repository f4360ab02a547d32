// A loopback port free at this moment, for a process that must be told its port in advance
// (a documented command, a unit's Environment=) where port 0 cannot be passed.
import { once } from 'node:events';
import { createServer } from 'node:net';

export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}
