// What a send lane is given (src/delivery/lane.ts and its parts: handoffs, claims, send, units):
// its own file so the parts take it from here, not from the lane that composes them.
import type { AttemptRecorder } from './attempt-recorder.ts';
import type { DeliveryMetrics } from './delivery-metrics.ts';
import type { HttpSender } from './http-sender.ts';
import type { TokenCache } from './oauth/token-cache.ts';
import type { RetryPolicy } from './retry-policy.ts';
import type { DestinationRecord } from '../store/types.ts';
import type { EventSettler } from './event-settler.ts';
import type { ClaimedDelivery, DeliveryStore, LaneLogger } from './types.ts';

export interface LaneDeps {
  store: Pick<DeliveryStore, 'claimDeliveries' | 'nextDue' | 'release'>;
  /** Stores handed-off deliveries that have no row yet, so their events can leave the queue. */
  settler: Pick<EventSettler, 'store'>;
  /** Maps again the claimed deliveries whose rows keep no item (delivered ones, replayed): fills in `item`. */
  remap?: (destination: DestinationRecord, claimed: readonly ClaimedDelivery[]) => Promise<void>;
  sender: HttpSender;
  /** Access tokens of destinations configured with OAuth (src/delivery/oauth/); absent: none refreshed. */
  tokens?: TokenCache;
  policy: RetryPolicy;
  recorder: AttemptRecorder;
  logger: LaneLogger;
  metrics?: DeliveryMetrics;
  clock: () => number;
  nextClaimId(): string;
  leaseMs: number;
  /**
   * The server's limit for one request, unless the destination sets `timeout_ms` (lane-timeouts.ts
   * shortens either after a timeout). A queued request whose lease has less left than its limit
   * (at most half the lease) goes back unsent.
   */
  sendTimeoutMs: number;
  lingerMs: number;
  /** Requests in flight per destination, unless it sets `max_concurrency`. */
  concurrency: number;
  pauseAfterMs: number;
  /** Longest sleep while idle, so work queued by another process (a replay) is noticed. */
  idlePollMs: number;
  /** Handed-off deliveries a lane holds in memory at most (at least two claims' worth); default HANDOFF_CAP. */
  handoffCap?: number;
  /** Aborted when shutdown runs out of grace. */
  abort: AbortSignal;
  /** [0, 1), for the jitter of the store-error backoff. */
  random?: () => number;
}
