// How the fan-out keeps pace with its send lanes, so that new work reaches them by handoff
// rather than through the store.
import type { Lane } from './lane.ts';

/**
 * The fan-out waits (polling every PACE_POLL_MS) while a running lane has no room for a whole
 * batch, up to PACE_PATIENCE_MS each time a lane runs short. When intake outruns sending,
 * events then wait in the dispatch queue and reach their lanes by handoff, instead of being
 * stored as unleased deliveries that each lane must claim back (a second write and a re-read
 * of every item and event). A fast lane frees a batch's room well within the patience (the
 * bench's webhook lane: 200 deliveries in ~0.1 s); a lane short for longer is slow (a
 * destination timing out, rate-limited, far away), and the fan-out goes on without it until
 * it has room again, so a slow destination costs the others at most this wait per time it
 * runs short, and its own deliveries are stored for it to claim.
 */
export const PACE_PATIENCE_MS = 250;
const PACE_POLL_MS = 2;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

/** Waits while a running lane cannot take `need` handed-off deliveries, each lane at most `patienceMs` per time it runs short. */
export async function paceFanOut(
  lanes: ReadonlyMap<string, Pick<Lane, 'saturated'>>, need: number, patienceMs: number, running: () => boolean,
): Promise<void> {
  for (;;) {
    let wait = false;
    // Every lane is asked, so each one's short-of-room clock is kept.
    for (const lane of lanes.values()) if (lane.saturated(need, performance.now(), patienceMs)) wait = true;
    if (!wait || !running()) return;
    await sleep(PACE_POLL_MS);
  }
}
