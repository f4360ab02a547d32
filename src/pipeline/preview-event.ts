// Endpoint 2's `preview` and `rules preview`: for each destination of the account, the
// exact request(s) it would be sent (secrets masked) or why it gets nothing — the fan-out's
// own plan (plan-event.ts), built and masked.
import type { Account } from '../accounts/types.ts';
import type { PluginRegistry } from '../destinations/load-plugins.ts';
import type { RuleSet } from '../rules/rule-set.ts';
import type { NormalizedEvent } from '../schema/types.ts';
import type { DestinationRecord } from '../store/types.ts';
import type { HashPool } from '../workers/pool.ts';
import type { OutboundRequest } from '../destinations/types.ts';
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
  /** With `?validate=platform`, for a destination that would be sent something: what its platform said. */
  validation?: PlatformValidation;
}

/**
 * What the platform said about the previewed requests (endpoint 2's `?validate=platform`):
 * `valid`, `invalid` (with its messages), `error` (no verdict: refused address, transport
 * error, the platform unavailable), `timeout` (no answer within the budget), or
 * `not_available` (no validation path: `messages` says why).
 */
export type PlatformVerdict = 'valid' | 'invalid' | 'error' | 'timeout' | 'not_available';

export interface PlatformValidation {
  /** The worst of its requests' verdicts (invalid, error, timeout, valid), or not_available. */
  verdict: PlatformVerdict;
  messages: string[];
  /** One per validation request, in the order of `requests`. */
  requests: { verdict: Exclude<PlatformVerdict, 'not_available'>; messages: string[]; status: number | null; latency_ms: number }[];
}

/**
 * What `?validate=platform` sends for one destination: its plugin's validation requests,
 * built with the real settings (secrets in clear: sent, never shown), or why there are none.
 */
export type PlatformCheck = { requests: OutboundRequest[] } | { unavailable: string } | { failed: string };

/** The preview, and with `validate` each entry's check (null: skipped, nothing to check). */
export interface PlannedPreview {
  preview: DestinationPreview[];
  checks?: (PlatformCheck | null)[];
}

export interface PreviewDeps {
  plugins: PluginRegistry;
  rules: () => RuleSet;
  /** Null: hash inline (CLI, tests). */
  pool: HashPool | null;
  /** Plans previews on other threads (the server's preview pool, src/pipeline/preview-pool.ts); absent, or null from it (resting after a failure): on this one. */
  offThread?: { plan(input: PreviewInput, rules: RuleSet): Promise<PlannedPreview | null> };
  /**
   * Without offThread, where an event whose rules would spend more than INLINE_PLAN_STEPS
   * here goes instead (a one-thread preview pool, made on first use): so the calling (HTTP)
   * thread plans cheap events itself and never more than that for one event.
   */
  overflow?: () => { plan(input: PreviewInput, rules: RuleSet): Promise<PlannedPreview | null> };
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
  /** Build each destination's platform check too (`?validate=platform`). */
  validate?: boolean;
}

/** Every destination of `input` as skipped (`rule_budget_exceeded`): its rules were stopped before they were planned. */
export function stoppedPreviews(input: PreviewInput, message: string): PlannedPreview {
  return {
    preview: input.destinations.map((d) => ({
      destination_id: d.id, type: d.type, name: d.name, status: 'skipped', reason: 'rule_budget_exceeded', message: `${d.type}: ${message}`, requests: [], warnings: [],
    })),
  };
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
  return (await planPreview(deps, input)).preview;
}

/** Masked settings per stored settings object, for the plugin's list of secrets they were masked with. */
const maskedOf = new WeakMap<object, { secret: readonly string[]; value: Record<string, unknown> }>();

/**
 * A destination's settings with its secrets as `****`: made once per settings object (the
 * destination cache hands out the same record while it holds it; settings are only read),
 * so every preview of it shares one masked copy, and the rules' public part of it
 * (publicSettings, cached per settings object) is made once too.
 */
function maskedSettingsOf(d: DestinationRecord, plugin: Parameters<typeof maskedSettings>[0]): Record<string, unknown> {
  const hit = maskedOf.get(d.settings);
  if (hit !== undefined && hit.secret === plugin.secretSettings) return hit.value;
  const value = maskedSettings(plugin, d.settings);
  maskedOf.set(d.settings, { secret: plugin.secretSettings, value });
  return value;
}

/** The preview, and with `input.validate` each destination's platform check. */
export async function planPreview(deps: PreviewDeps, input: PreviewInput): Promise<PlannedPreview> {
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
      settingsFor: maskedSettingsOf,
      ...(deps.overflow === undefined ? {} : { inlineSteps: INLINE_PLAN_STEPS }),
    });
  } catch (err) {
    if (!(err instanceof RuleInlineLimitError) || deps.overflow === undefined) throw err;
    const planned = await deps.overflow().plan(input, rules);
    if (planned !== null) return planned;
    return stoppedPreviews(input, 'this event\'s rules need a preview thread and none is available now; nothing would be sent');
  }
  const preview = plans.map((p): DestinationPreview => {
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
  if (input.validate !== true) return { preview };
  return { preview, checks: plans.map((p) => (p.status === 'ready' ? platformCheck(p, input.now) : null)) };
}

/** The plugin's validation requests for a ready plan, built from its items with the stored (real) settings. */
function platformCheck(p: Extract<DestinationPlan, { status: 'ready' }>, now: number): PlatformCheck {
  const { plugin, destination } = p;
  if (plugin.validationRequests === undefined) {
    return { unavailable: plugin.noTestMode !== undefined
      ? `${destination.type} has no test mode or validation path (${plugin.noTestMode})`
      : `${destination.type} has no way to check a request without acting on it` };
  }
  try {
    const made = plugin.validationRequests({ settings: destination.settings, items: p.items, now });
    return Array.isArray(made) ? { requests: made } : { unavailable: made.unavailable };
  } catch (err) {
    return { failed: `${destination.type}: building the validation request failed: ${(err as Error).message}`.slice(0, 500) };
  }
}
