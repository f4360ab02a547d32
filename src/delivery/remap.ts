// A delivered row keeps no item (what was sent is on its attempt), so a delivered delivery
// replayed with --force is mapped again from its stored event, with the rules and settings of
// now, as its fan-out would: the same dedup keys (event id, message id) go out again.
import type { PluginRegistry } from '../destinations/load-plugins.ts';
import { planEvents } from '../pipeline/plan-event.ts';
import type { RuleSet } from '../rules/rule-set.ts';
import type { DestinationRecord, Store } from '../store/types.ts';
import type { HashPool } from '../workers/pool.ts';
import type { ClaimedDelivery } from './types.ts';

export interface RemapDeps {
  store: Pick<Store, 'accounts'>;
  plugins: PluginRegistry;
  rules: { current(): RuleSet };
  pool: HashPool | null;
  clock: () => number;
}

/** Fills in `item` of the claimed deliveries that carry `remap`; one that no longer maps keeps none (and fails as unsendable). */
export type Remap = (destination: DestinationRecord, claimed: readonly ClaimedDelivery[], now?: number) => Promise<void>;

/** `now`: the mapping's time (a trace rebuilding what an attempt sent passes the attempt's); default the clock. */
export function createRemap(deps: RemapDeps): Remap {
  return async (destination, claimed, now = deps.clock()) => {
    const todo = claimed.filter((d) => d.remap !== undefined);
    const accounts = new Map<string, Awaited<ReturnType<Store['accounts']['get']>>>();
    for (const d of todo) if (!accounts.has(d.scriptId)) accounts.set(d.scriptId, await deps.store.accounts.get(d.scriptId));
    const mapped = todo.filter((d) => accounts.get(d.scriptId) != null);
    const plans = await planEvents({ plugins: deps.plugins, rules: deps.rules.current(), pool: deps.pool }, mapped.map((d) => ({
      account: accounts.get(d.scriptId)!, destinations: [destination], event: d.remap!.event,
      eventId: d.remap!.eventKey, receivedAt: d.receivedAt,
    })), { now, build: false, warnings: false });
    mapped.forEach((d, i) => {
      const p = plans[i][0];
      if (p.status === 'ready' && p.items[d.remap!.part] !== undefined) d.item = p.items[d.remap!.part];
    });
    for (const d of todo) delete d.remap;
  };
}
