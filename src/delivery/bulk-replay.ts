// A bulk replay, as the admin API and the CLI both run it: scoped to an account or a
// destination unless the operator says "all" in so many words, countable without changing
// anything (dry run), and capped per call so one command cannot re-queue every tenant's
// history at once; the answer says how many are left for the next call.
import type { DeliveryStore, ReplayFilter } from '../store/delivery-contract.ts';

export interface BulkReplayRequest {
  filter: Omit<ReplayFilter, 'limit' | 'deliveryId'>;
  /** The operator's explicit "every account": required when neither account nor destination is named. */
  all: boolean;
  dryRun: boolean;
  /** Deliveries one call re-queues at most (MAX_REPLAY). */
  max: number;
}

export type BulkReplayResult =
  | { dryRun: true; wouldReplay: number; max: number }
  | { dryRun: false; replayed: number; left: number; max: number };

/**
 * Why the request may not run (no scope and no `all`), or null when it may. `action` names the
 * operation in the sentence: a retry-now acts across accounts the same way and needs the same.
 */
export function replayScopeProblem(
  req: { filter: Pick<BulkReplayRequest['filter'], 'scriptId' | 'destinationId'>; all: boolean }, action = 'a bulk replay',
): string | null {
  if (req.filter.scriptId !== undefined || req.filter.destinationId !== undefined || req.all) return null;
  return `${action} needs a scope: an account (script_id) or a destination (destination_id), or "all" to mean every account`;
}

/**
 * Counts (dry run) or re-queues up to `max` matching deliveries, oldest first.
 *
 * @example await bulkReplay(store.deliveries, { filter: { scriptId, statuses: ['dead'] }, all: false, dryRun: true, max: 10_000 }, Date.now())
 *          // → { dryRun: true, wouldReplay: 42, max: 10000 }
 */
export async function bulkReplay(deliveries: Pick<DeliveryStore, 'replay' | 'countReplayable'>, req: BulkReplayRequest, now: number): Promise<BulkReplayResult> {
  const problem = replayScopeProblem(req);
  if (problem !== null) throw new Error(problem);
  if (req.dryRun) return { dryRun: true, wouldReplay: await deliveries.countReplayable(req.filter), max: req.max };
  const replayed = await deliveries.replay({ ...req.filter, limit: req.max }, now);
  const left = replayed < req.max ? 0 : await deliveries.countReplayable(req.filter);
  return { dryRun: false, replayed, left, max: req.max };
}
