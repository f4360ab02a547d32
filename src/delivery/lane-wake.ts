// A lane's one wake. Two things wake a lane that is not busy claiming: a retry it recorded
// coming due, and its next look at the store for due work (lane-claims.ts:
// at the store's next due time, at most idlePollMs away, or after a store error). Both are
// times in the lane's state (`s.retries.due`, `s.wake.look`); arm() computes the next wake
// from both and keeps one timer for it: the thread's poll tick when the look comes first and
// is a whole number of ticks away (poll-tick.ts: an idle lane wakes with the thread's other
// polls), else a timer of its own. When it fires, whatever has come due runs: the due
// retries are claimed ahead of the queue, and the look reads the store. A look on the tick
// that read under an announcement watch (poll-tick.ts heardMark) lets the quiet ticks go by
// until the store's next due time it read (afterUnlessHeard): what is stored for the lane
// meanwhile is announced, and wakes it (notify).
import { isRunning, type LaneState, type LaneDeps } from './lane-state.ts';
import { afterUnlessHeard } from '../heard-polls.ts';
import { TICK_MS } from '../poll-tick.ts';

/** Retries coming due within this long of each other are claimed together: each at most this late. */
export const RETRY_CLAIM_GAP_MS = 50;

/** What a look at the store read: the announcement watch it read under, and the store's next due time then (null: none). */
export interface LookRead {
  mark: number | null;
  dueAt: number | null;
}

export interface LaneWake {
  /** Look at the store for due work in `ms` (instead of any look planned); `read`: what the last look read. */
  lookIn(ms: number, read?: LookRead): void;
  /** No look planned: a claim is wanted now, or the lane stops sending. */
  cancelLook(): void;
  /** A recorded retry comes due at `at`: the lane claims its due retries then. */
  retryAt(at: number): void;
  /** No more wakes (the lane stopped). */
  stop(): void;
}

/** What runs when the wake fires: the due retries came due (popped), and/or the planned look is due. */
export interface WakeHandlers {
  retriesDue(): void;
  look(): void;
}

export function createLaneWake(deps: Pick<LaneDeps, 'clock'>, s: LaneState, on: WakeHandlers): LaneWake {
  const w = s.wake;

  function disarm(): void {
    w.cancel?.();
    w.cancel = null;
    w.at = null;
  }

  /** Sets the one timer for the earlier of the first retry due and the planned look, unless it is set for that already. */
  function arm(): void {
    const retry = s.retries.due[0];
    const look = w.look;
    if (!isRunning(s) || (retry === undefined && look === null)) return disarm();
    const now = deps.clock();
    const forLook = look !== null && (retry === undefined || look.at <= retry);
    const at = forLook ? look.at : Math.max(retry!, now + RETRY_CLAIM_GAP_MS);
    if (w.cancel !== null && w.at === at && w.forLook === forLook) return;
    disarm();
    w.at = at;
    w.forLook = forLook;
    // The idle look, a whole number of ticks away, waits for the tick (but for its quiet ones
    // until the due time it read); else a timer of its own.
    const onTick = forLook && look.onTick;
    const ms = onTick ? Math.max(1, Math.ceil((at - now) / TICK_MS)) * TICK_MS : Math.max(0, at - now);
    const dueInMs = onTick && look.dueAt !== null ? Math.max(0, look.dueAt - now) : null;
    w.cancel = afterUnlessHeard(ms, onTick ? look.mark : null, fire, dueInMs);
  }

  function fire(): void {
    const forLook = w.forLook;
    w.cancel = null;
    w.at = null;
    const now = deps.clock();
    let retriesDue = false;
    while (s.retries.due.length > 0 && s.retries.due[0] <= now) {
      heapPop(s.retries.due);
      retriesDue = true;
    }
    // The tick may come a little before the look's nominal time: it is the look's wake all the same.
    const lookDue = w.look !== null && (forLook || w.look.at <= now);
    if (lookDue) w.look = null;
    if (retriesDue) on.retriesDue();
    if (lookDue) on.look();
    arm();
  }

  return {
    lookIn(ms, read) {
      w.look = { at: deps.clock() + ms, onTick: ms > 0 && ms % TICK_MS === 0, mark: read?.mark ?? null, dueAt: read?.dueAt ?? null };
      arm();
    },
    cancelLook() {
      w.look = null;
      arm();
    },
    retryAt(at) {
      heapPush(s.retries.due, at);
      arm();
    },
    stop() {
      w.look = null;
      disarm();
    },
  };
}

/** Adds `t` to the min-heap `h`. */
function heapPush(h: number[], t: number): void {
  let i = h.push(t) - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (h[parent] <= t) break;
    h[i] = h[parent];
    i = parent;
  }
  h[i] = t;
}

/** Removes the least element of the min-heap `h` (not empty). */
function heapPop(h: number[]): void {
  const last = h.pop()!;
  if (h.length === 0) return;
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= h.length) break;
    const c = l + 1 < h.length && h[l + 1] < h[l] ? l + 1 : l;
    if (h[c] >= last) break;
    h[i] = h[c];
    i = c;
  }
  h[i] = last;
}
