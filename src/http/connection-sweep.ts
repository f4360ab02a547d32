// Node's HTTP server enforces its headers and request timeouts by a sweep of its open
// connections every connectionsCheckingInterval, on a timer of its own from listen() to
// close(), whether or not a connection is open. On an idle server that timer woke the HTTP
// thread every second, and it drifted apart from the thread's poll tick (two timers of a
// second stay in phase only while nothing delays the second by a millisecond: under load,
// two wakes a second). Here the sweep runs on the thread's poll tick (poll-tick.ts every():
// no timer of its own) and only while a connection is open: a connection stalled in its
// headers is still closed within the timeout + a second (a connection, and each sweep, keep
// the tick at a second where it slows when idle: idle-tick.ts).
// Node has no API for this: its sweep's timer is an internal symbol of the server, cleared
// and its callback called from the tick. Where it is not found (another Node), Node's own
// sweep stays, its timer restarted with the tick's so the two fire together (alignTick).
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { alignTick, busy, every } from '../poll-tick.ts';

/** Node's timer of the sweep (lib/_http_server.js kConnectionsCheckingInterval). */
const SWEEP_TIMER = 'http.server.connectionsCheckingInterval';

interface NodeTimer { _onTimeout?: unknown; _repeat?: unknown }

/**
 * Called once `server` listens (Node starts its sweep then): takes the sweep over as described
 * at the top. Returns whether it did (false: Node's sweep runs as Node runs it).
 */
export function sweepOnTick(server: Server, everyMs: number): boolean {
  const key = Object.getOwnPropertySymbols(server).find((k) => k.description === SWEEP_TIMER);
  const timer = key === undefined ? undefined : (server as unknown as Record<symbol, NodeTimer | undefined>)[key];
  const sweep = timer?._onTimeout;
  if (timer === undefined || typeof sweep !== 'function' || !timer._repeat) {
    alignTick();
    return false;
  }
  clearInterval(timer as NodeJS.Timeout);
  let open = 0;
  let stop: (() => void) | undefined;
  server.on('connection', (socket: Socket) => {
    busy();
    if (open++ === 0) {
      stop = every(everyMs, () => {
        busy();
        sweep.call(timer);
      });
    }
    socket.once('close', () => {
      if (--open > 0) return;
      stop?.();
      stop = undefined;
    });
  });
  server.once('close', () => stop?.());
  return true;
}
