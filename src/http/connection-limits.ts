// Connection limits at the socket level, before any HTTP parsing: at most `perAddress`
// open connections from one client address and `total` overall; a connection over either
// limit is closed at once. Counted by the socket's own address (a reverse proxy in front
// should apply its own per-client limits: here every client behind it shares its address).
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionLimits {
  perAddress: number;
  total: number;
}

export interface ConnectionCounter {
  /** Open connections from `address`. */
  count(address: string): number;
  /** Connections closed because a limit was reached, since start. */
  readonly refused: number;
}

/** Installs the limits on `server`. The map holds one entry per address with open connections. */
export function limitConnections(server: Server, limits: ConnectionLimits): ConnectionCounter {
  const open = new Map<string, number>();
  let total = 0;
  let refused = 0;
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    const mine = open.get(address) ?? 0;
    if (mine >= limits.perAddress || total >= limits.total) {
      refused++;
      socket.destroy();
      return;
    }
    open.set(address, mine + 1);
    total++;
    socket.once('close', () => {
      total--;
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
  return {
    count: (address) => open.get(address) ?? 0,
    get refused() {
      return refused;
    },
  };
}
