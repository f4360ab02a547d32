// The one planner of what each destination gets for an event, shared by endpoint 2's
// preview (and `rules preview`, the admin API's draft previews) and the delivery fan-out:
// identifiers of a whole batch hashed in one pool call (one set per event and enabled
// destination type that wants them; a batch under 64 items is hashed inline by that call,
// src/workers/pool.ts), then per destination: no plugin → skipped; the
// mapping (gates, attribution, rules, the plugin's native schema) → skipped or ready with
// its items; a mapping that throws → failed. With `build`, the requests too (preview);
// fan-out stores the items and the send lane builds each request once, when it queues the
// request's deliveries as a unit (lane-units.ts), before a slot is free.
import { RuleInlineLimitError, type SharedSteps } from '../rules/json-logic.ts';
import type { Account } from '../accounts/types.ts';
import { attributionSpecsOf, type PluginRegistry } from '../destinations/load-plugins.ts';
import type { DestinationPlugin, OutboundRequest, OutgoingItem } from '../destinations/types.ts';
import type { DestinationRecord } from '../domain/records.ts';
import type { RuleSet } from '../rules/rule-set.ts';
import type { NormalizedEvent } from '../schema/types.ts';
import type { HashPool } from '../workers/pool.ts';
import type { HashItem } from '../workers/hash-worker.ts';
import { createNormalMemo, type HashedIdentifiers, type NormalMemo } from '../identifiers/index.ts';
import { readAttribution, type AttributionReading } from '../attribution/index.ts';
import { attributionSources, mapEventForDestination, type SkipReason } from './map-event.ts';

/** One event and the destinations it is planned for. */
export interface PlanSubject {
  account: Pick<Account, 'scriptId' | 'country' | 'host'>;
  destinations: readonly DestinationRecord[];
  event: NormalizedEvent;
  /** Dedup key sent to the platform: the customer's event.id, or tracklane's own id. */
  eventId: string;
  receivedAt: number;
}

export type DestinationPlan =
  | { destination: DestinationRecord; status: 'ready'; plugin: DestinationPlugin; items: OutgoingItem[]; requests: OutboundRequest[]; warnings: string[] }
  | { destination: DestinationRecord; status: 'skipped'; reason: SkipReason | 'plugin_missing'; message: string; warnings: string[] }
  | { destination: DestinationRecord; status: 'failed'; reason: 'build_failed'; message: string; warnings: string[] };

export interface PlanDeps {
  plugins: PluginRegistry;
  rules: RuleSet;
  /** Null: identifiers are hashed inline by the mapping. */
  pool: HashPool | null;
}

export interface PlanOptions {
  now: number;
  /** Build the requests too (preview); fan-out stores the items only. */
  build: boolean;
  /** The settings the mapping sees (preview: secrets as `****`); default the stored ones. */
  settingsFor?: (d: DestinationRecord, plugin: DestinationPlugin) => Record<string, unknown>;
  /** Yield to the event loop after this many ms of mapping (fan-out on a busy thread); default never. */
  sliceMs?: number;
  /** Collect warnings (default); fan-out passes false, as it stores none. */
  warnings?: boolean;
  /**
   * Evaluation steps every destination's rules may spend together in this call, on top of
   * each destination's own budget: past them planEvents throws RuleInlineLimitError, so a
   * caller on a thread that must stay responsive can plan the events elsewhere. Default: no such limit.
   */
  inlineSteps?: number;
}

/** One plan per destination of each subject, in order. */
export async function planEvents(deps: PlanDeps, subjects: readonly PlanSubject[], opts: PlanOptions): Promise<DestinationPlan[][]> {
  // Every value normalised and hashed in this call, for any destination's identifiers or
  // rules (`user.*`): each once, however many destinations want it.
  const memo = createNormalMemo();
  const hashed = await hashAll(deps, subjects, memo);
  const specs = attributionSpecsOf(deps.plugins);
  const shared = opts.inlineSteps === undefined ? undefined : { left: opts.inlineSteps };
  const out: DestinationPlan[][] = [];
  let slice = performance.now();
  for (let i = 0; i < subjects.length; i++) {
    const s = subjects[i];
    // Cookies and URLs are read once per event; each destination refines the reading.
    const reading = s.destinations.length > 1 && s.event?.context !== undefined
      ? readAttribution(attributionSources(s.event, s.account, s.receivedAt, specs)) : undefined;
    const plans = new Array<DestinationPlan>(s.destinations.length);
    for (let k = 0; k < plans.length; k++) {
      const d = s.destinations[k];
      plans[k] = planOne(deps, s, d, opts, specs, hashed.size === 0 ? undefined : hashed.get(`${i}|${d.type}`), reading, shared, memo);
    }
    out.push(plans);
    if (opts.sliceMs !== undefined && performance.now() - slice > opts.sliceMs) {
      await new Promise((r) => setImmediate(r));
      slice = performance.now();
    }
  }
  return out;
}

function planOne(
  deps: PlanDeps, s: PlanSubject, d: DestinationRecord, opts: PlanOptions,
  specs: ReturnType<typeof attributionSpecsOf>, hashed: HashedIdentifiers | undefined, reading: AttributionReading | undefined,
  sharedSteps: SharedSteps | undefined, memo: NormalMemo,
): DestinationPlan {
  const loaded = deps.plugins.get(d.type);
  if (!loaded) return { destination: d, status: 'skipped', reason: 'plugin_missing', message: `${d.type}: no plugin of this type is loaded`, warnings: [] };
  try {
    const r = mapEventForDestination({
      plugin: loaded.plugin,
      destination: opts.settingsFor ? { ...d, settings: opts.settingsFor(d, loaded.plugin) } : d,
      event: s.event, eventId: s.eventId, receivedAt: s.receivedAt, account: s.account,
      rules: deps.rules.rulesFor(s.account.scriptId, d.type), now: opts.now, hashed, build: opts.build, warnings: opts.warnings, attributionSpecs: specs, attributionReading: reading, sharedSteps, memo,
    });
    if (r.status === 'skipped') return { destination: d, status: 'skipped', reason: r.reason, message: r.message, warnings: r.warnings };
    return { destination: d, status: 'ready', plugin: loaded.plugin, items: r.items, requests: r.requests, warnings: r.warnings };
  } catch (err) {
    if (err instanceof RuleInlineLimitError) throw err; // the caller plans the events elsewhere
    // A plugin or rule bug (a native schema mismatch, a build that throws): on record, never retried.
    return { destination: d, status: 'failed', reason: 'build_failed', message: (err as Error).message.slice(0, 500), warnings: [] };
  }
}

/** Identifiers of every (subject, enabled destination type that wants them), through the pool in one call. */
async function hashAll(deps: PlanDeps, subjects: readonly PlanSubject[], memo: NormalMemo): Promise<Map<string, HashedIdentifiers>> {
  const out = new Map<string, HashedIdentifiers>();
  if (deps.pool === null) return out;
  const keys: string[] = [];
  const seen = new Set<string>();
  const items: HashItem[] = [];
  subjects.forEach((s, i) => {
    const user = s.event?.user;
    if (!user) return;
    for (const d of s.destinations) {
      const spec = deps.plugins.get(d.type)?.plugin.identifiers;
      const key = `${i}|${d.type}`;
      if (!spec || !d.enabled || seen.has(key)) continue;
      seen.add(key);
      keys.push(key);
      items.push({ user, spec, defaultCountry: s.account.country ?? undefined });
    }
  });
  if (items.length === 0) return out;
  const hashed = await deps.pool.hashBatch(items, memo);
  keys.forEach((k, j) => out.set(k, hashed[j]));
  return out;
}
