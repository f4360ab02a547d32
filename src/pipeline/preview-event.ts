// Endpoint 2's `preview` and `rules preview`: for each destination of the account, the
// exact request(s) it would be sent (secrets masked) or why it gets nothing — the fan-out's
// own plan (plan-event.ts), built and masked.
import type { Account } from '../accounts/types.ts';
import type { PluginRegistry } from '../destinations/load-plugins.ts';
import type { RuleSet } from '../rules/rule-set.ts';
import type { NormalizedEvent } from '../schema/types.ts';
import type { DestinationRecord } from '../store/types.ts';
import type { HashPool } from '../workers/pool.ts';
import { maskRequest, type SkipReason } from './map-event.ts';
import { planEvents, type DestinationPlan } from './plan-event.ts';
import { RuleInlineLimitError } from '../rules/json-logic.ts';
import { maskedSettings } from './mask-request.ts';

export interface PreviewRequest {
  method: string;
  /** Secrets masked as `****`. */
  url: string;
  /** Secret-bearing headers masked. */
  headers: Record<string, string>;
  /** The body parsed, for reading. */
  body: unknown;
  /** The body exactly as it would be sent (secrets masked). */
  raw_body: string;
}

export interface DestinationPreview {
  destination_id: string;
  type: string;
  name: string;
  status: 'would_send' | 'skipped';
  reason?: SkipReason | 'plugin_missing' | 'build_failed';
  message?: string;
  requests: PreviewRequest[];
  warnings: string[];
}

export interface PreviewDeps {
  plugins: PluginRegistry;
  rules: () => RuleSet;
  /** Null: hash inline (CLI, tests). */
  pool: HashPool | null;
  /** Plans previews on other threads (the server's preview pool, src/pipeline/preview-pool.ts); absent, or null from it (resting after a failure): on this one. */
  offThread?: { plan(input: PreviewInput, rules: RuleSet): Promise<DestinationPreview[] | null> };
  /**
   * Without offThread, where an event whose rules would spend more than INLINE_PLAN_STEPS
   * here goes instead (a one-thread preview pool, made on first use): so the calling (HTTP)
   * thread plans cheap events itself and never more than that for one event.
   */
  overflow?: () => { plan(input: PreviewInput, rules: RuleSet): Promise<DestinationPreview[] | null> };
}

/**
 * Evaluation steps one event's rules may spend, all destinations together, on the thread that
 * answers endpoint 2 (about a millisecond; the shipped rules spend a few hundred per
 * destination). An event that needs more is planned on the overflow thread.
 */
export const INLINE_PLAN_STEPS = 20_000;

export interface PreviewInput {
  account: Pick<Account, 'scriptId' | 'country' | 'host'>;
  destinations: readonly DestinationRecord[];
  event: NormalizedEvent;
  eventId: string;
  receivedAt: number;
  now: number;
}

/** Every destination of `input` as skipped (`rule_budget_exceeded`): its rules were stopped before they were planned. */
export function stoppedPreviews(input: PreviewInput, message: string): DestinationPreview[] {
  return input.destinations.map((d) => ({
    destination_id: d.id, type: d.type, name: d.name, status: 'skipped', reason: 'rule_budget_exceeded', message: `${d.type}: ${message}`, requests: [], warnings: [],
  }));
}

/** A request body as JSON when it is JSON, else the text. */
export const parseBody = (s: string): unknown => {
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
};

export async function previewEvent(deps: PreviewDeps, input: PreviewInput): Promise<DestinationPreview[]> {
  if (deps.offThread !== undefined && input.destinations.length > 0) {
    const planned = await deps.offThread.plan(input, deps.rules());
    if (planned !== null) return planned;
  }
  const rules = deps.rules();
  let plans: DestinationPlan[];
  try {
    [plans] = await planEvents({ plugins: deps.plugins, rules, pool: deps.pool }, [input], {
      now: input.now,
      build: true,
      // Secrets never enter the preview: it is built with `****` in their place.
      settingsFor: (d, plugin) => maskedSettings(plugin, d.settings),
      ...(deps.overflow === undefined ? {} : { inlineSteps: INLINE_PLAN_STEPS }),
    });
  } catch (err) {
    if (!(err instanceof RuleInlineLimitError) || deps.overflow === undefined) throw err;
    const planned = await deps.overflow().plan(input, rules);
    if (planned !== null) return planned;
    return stoppedPreviews(input, 'this event\'s rules need a preview thread and none is available now; nothing would be sent');
  }
  return plans.map((p): DestinationPreview => {
    const base = { destination_id: p.destination.id, type: p.destination.type, name: p.destination.name };
    if (p.status !== 'ready') return { ...base, status: 'skipped', reason: p.reason, message: p.message, requests: [], warnings: p.warnings };
    return {
      ...base,
      status: 'would_send',
      requests: p.requests.map((r) => {
        const m = maskRequest(r, p.plugin);
        return { method: m.method, url: m.url, headers: m.headers, body: parseBody(m.body), raw_body: m.body };
      }),
      warnings: p.warnings,
    };
  });
}
