// One event → the items (and, unless `build: false`, the requests) for one destination, or the
// reason it gets nothing. Pure and shared by previews (endpoint 2, `rules preview`) and the
// delivery fan-out: gating (enabled, environment, allow-list, consent), attribution,
// identifiers, rules, then the plugin's requests. The fan-out passes `build: false` (items
// only): the lane builds the requests later (src/delivery/lane-units.ts → build-requests-for.ts).
import { batchesFor } from '../destinations/chunk.ts';
import { messageId } from '../destinations/message-id.ts';
import { nativeProblems, NativeSchemaError } from '../destinations/native-schema.ts';
import type { Account } from '../accounts/types.ts';
import type { ConsentGate, DestinationPlugin, OutboundRequest, OutgoingItem } from '../destinations/types.ts';
import { applyRules } from '../rules/apply-rules.ts';
import type { RuleSpec } from '../rules/types.ts';
import type { SharedSteps } from '../rules/json-logic.ts';
import type { Consent, NormalizedEvent } from '../schema/types.ts';
import {
  extractAttribution, refineAttribution, type AttributionInput, type AttributionReading, type NamedAttributionSpec,
} from '../attribution/index.ts';
import { attributionWarnings, identifierWarnings, matchKeyWarning } from './destination-warnings.ts';
import { hashIdentifiers, type HashedIdentifiers, type NormalMemo } from '../identifiers/index.ts';
import { buildRuleData, publicSettings } from './rule-data.ts';
import { unmatchableReason } from './unmatchable.ts';

export { maskRequest, MASK } from './mask-request.ts';
export { NativeSchemaError } from '../destinations/native-schema.ts';

/** A destination as an operator configured it for one account. */
export interface DestinationInstance {
  id: string;
  /** The plugin name, e.g. `ga4`. */
  type: string;
  name: string;
  enabled: boolean;
  settings: Record<string, unknown>;
}

/**
 * `no_matching_rule`: no enabled rule is written for this event name; `condition_not_met`:
 * rules exist for it, but each one's `when` was false or it failed (see the warnings).
 */
export type SkipReason =
  | 'disabled' | 'dev_environment' | 'consent' | 'not_allow_listed' | 'no_matching_rule' | 'condition_not_met' | 'rule_budget_exceeded'
  | 'unmatchable' | 'no_test_mode';

export type MapResult =
  | { status: 'skipped'; reason: SkipReason; message: string; warnings: string[] }
  | { status: 'ready'; requests: OutboundRequest[]; items: OutgoingItem[]; warnings: string[] };

export interface MapEventInput {
  plugin: DestinationPlugin;
  destination: DestinationInstance;
  event: NormalizedEvent;
  /** Dedup key sent to the platform: the customer's event.id, or tracklane's own id. */
  eventId: string;
  receivedAt: number;
  account: Pick<Account, 'scriptId' | 'country' | 'host'>;
  /** The rules for this account and destination type (RuleSet.rulesFor). */
  rules: readonly RuleSpec[];
  /** ms since epoch; the only clock used. */
  now: number;
  /**
   * Every loaded plugin's attribution spec (attributionSpecsOf(registry)), so rules see every
   * id under `attribution`. Absent: this plugin's own spec only.
   */
  attributionSpecs?: readonly NamedAttributionSpec[];
  /**
   * The event's cookies and URLs already read with exactly `attributionSpecs`
   * (readAttribution), when the event is mapped for several destinations; refined here
   * with this destination's settings.
   */
  attributionReading?: AttributionReading;
  /**
   * Identifiers already hashed for this plugin (by the worker pool, in a batch);
   * computed inline when absent.
   */
  hashed?: HashedIdentifiers;
  /**
   * Values already normalised and hashed for this event (planEvents' memo): the identifiers
   * and the rules' `user` reuse them instead of hashing a value again.
   */
  memo?: NormalMemo;
  /**
   * Build the native requests too (default). Fan-out passes false: it stores the items, and
   * the send lane builds each request once, when it queues it as a unit (with the batch it sends).
   */
  build?: boolean;
  /** Collect warnings for the rule author (default). Fan-out passes false: it stores none. */
  warnings?: boolean;
  /** Steps the rules may spend together with other destinations' (planEvents' inlineSteps); past them, RuleInlineLimitError. */
  sharedSteps?: SharedSteps;
}

/** plugin.buildRequests threw: a bug in the plugin or settings it cannot use. Never retried. */
export class BuildRequestsError extends Error {
  override name = 'BuildRequestsError';
  readonly retryable = false;
  constructor(readonly destinationType: string, cause: unknown) {
    super(`${destinationType}: building the request failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

const CONSENT_KEYS: readonly (keyof Consent)[] = ['analytics', 'marketing', 'personalization'];

/**
 * @throws NativeSchemaError when a rule's output fails the plugin's nativeSchema.
 * @throws BuildRequestsError when the plugin's buildRequests throws.
 * @example
 * const r = mapEventForDestination({ plugin, destination, event, eventId, receivedAt, account,
 *                                    rules: ruleSet.rulesFor(account.scriptId, destination.type), now: Date.now() });
 * if (r.status === 'ready') for (const req of r.requests) await send(req);
 * // With `build: false` (delivery's fan-out), `requests` is [] and only `items` are made.
 */
export function mapEventForDestination(input: MapEventInput): MapResult {
  const { plugin, destination, event, account, now } = input;
  const type = destination.type;
  const settings = destination.settings;

  if (!destination.enabled) return skipped(type, 'disabled', 'destination is disabled');
  if (event.context.environment === 'dev') return skipped(type, 'dev_environment', 'context.environment is dev; nothing is delivered');

  const allowList = settings.events;
  if (Array.isArray(allowList) && !allowList.includes(event.event.name)) {
    return skipped(type, 'not_allow_listed', `${event.event.name} is not in this destination's events allow-list`);
  }

  // A config saved with test_event_code before it was refused for a platform without test mode.
  if (plugin.noTestMode !== undefined && typeof settings.test_event_code === 'string' && settings.test_event_code !== '') {
    return skipped(type, 'no_test_mode', `test_event_code is set, but ${type} has no test mode (${plugin.noTestMode}); ` +
      'nothing is sent, so no test becomes a real conversion: remove test_event_code to deliver');
  }

  const gate = consentGate(plugin.consent, settings.consent_category);
  if (gate.kind === 'invalid') return skipped(type, 'consent', `consent_category "${gate.value}" is not one of ${CONSENT_KEYS.join(', ')}; nothing sent`);
  if (gate.kind === 'gated' && event.consent[gate.key] !== true) {
    return skipped(type, 'consent', `consent.${gate.key} is false; nothing sent`);
  }

  const warnings: string[] = [];
  const wantWarnings = input.warnings !== false;
  const specs = specsWith(plugin, input.attributionSpecs);
  // Ids are read as at the event's receipt, not at mapping: an id built from a landing
  // parameter (fbc from fbclid) is then the same however often, and whenever, it is mapped.
  const attributionInput: AttributionInput = {
    cookies: event.cookies, url: event.context.url, landingUrl: event.context.landing_url, user: event.user ?? null,
    now: input.receivedAt, salt: account.scriptId, specs, settings,
  };
  const attribution = input.attributionReading !== undefined && specs === input.attributionSpecs
    ? refineAttribution(input.attributionReading, attributionInput)
    : extractAttribution(attributionInput);
  if (wantWarnings) warnings.push(...attributionWarnings(type, plugin, attribution.warnings));

  let identifiers: Record<string, string | string[]> = {};
  let hashed: HashedIdentifiers | undefined;
  if (plugin.identifiers !== null) {
    hashed = input.hashed ?? hashIdentifiers(event.user, plugin.identifiers, { defaultCountry: account.country ?? undefined, memo: input.memo });
    identifiers = hashed.fields;
    if (wantWarnings) warnings.push(...identifierWarnings(type, hashed.warnings));
  }

  const data = buildRuleData({
    event,
    plugin,
    attribution: attribution.ids,
    account,
    settings: publicSettings(plugin, settings),
    receivedAt: input.receivedAt,
    memo: input.memo,
  });
  const applied = applyRules(input.rules, data, input.sharedSteps);
  if (wantWarnings) warnings.push(...applied.warnings.map((w) => `${type}: ${w}`));
  // A skip after the rules ran is explained by its warnings (a missing client id, a failed
  // "when"), so they are made even for a caller that collects none: fan-out keeps them with
  // the skipped delivery.
  const uncollected = wantWarnings ? null : { attribution: attribution.warnings, hashed, rules: applied.warnings };
  if (applied.overBudget.length > 0) {
    return skipped(type, 'rule_budget_exceeded',
      `rule ${applied.overBudget.join(', ')} was stopped: this destination's rules ran out of the evaluation step budget they share for one event; nothing sent`, skipWarningsOf(type, plugin, warnings, uncollected));
  }
  if (applied.events.length === 0) {
    if (applied.considered.length === 0) {
      return skipped(type, 'no_matching_rule', `no rule is written for ${event.event.name}; nothing sent`, skipWarningsOf(type, plugin, warnings, uncollected));
    }
    const ids = applied.considered.join(', ');
    return skipped(type, 'condition_not_met',
      `${applied.considered.length === 1 ? 'rule' : 'rules'} ${ids} ${applied.considered.length === 1 ? 'is' : 'are'} written for ${event.event.name}, ` +
      'but produced no native event (its "when" condition was false, or it failed: see warnings); nothing sent', skipWarningsOf(type, plugin, warnings, uncollected));
  }

  for (const native of applied.events) {
    const problems = plugin.nativeSchema ? nativeProblems(plugin.nativeSchema, native.fields) : [];
    if (problems.length > 0) throw new NativeSchemaError(type, native.ruleId, problems);
  }

  const matchWarning = wantWarnings ? matchKeyWarning(type, plugin, identifiers, attribution.ids) : null;
  if (matchWarning !== null) warnings.push(matchWarning);

  const items: OutgoingItem[] = applied.events.map((native) => ({
    native,
    eventId: input.eventId,
    messageId: messageId({
      scriptId: account.scriptId, eventName: event.event.name, eventId: input.eventId, destinationId: destination.id, ruleId: native.ruleId,
    }),
    event,
    identifiers,
    attribution: attribution.ids,
    receivedAt: input.receivedAt,
  }));
  const unmatchable = unmatchableReason(plugin, settings, items);
  if (unmatchable !== null) return skipped(type, 'unmatchable', `${unmatchable}; nothing sent`, skipWarningsOf(type, plugin, warnings, uncollected));
  if (input.build === false) return { status: 'ready', requests: [], items, warnings: distinct(warnings) };
  const requests: OutboundRequest[] = [];
  for (const part of batchesFor(plugin, items)) {
    try {
      requests.push(...plugin.buildRequests({ settings, items: part, now }));
    } catch (err) {
      throw new BuildRequestsError(type, err);
    }
  }
  if (plugin.warnings) warnings.push(...plugin.warnings({ settings, items, now }).map((w) => `${type}: ${w}`));
  return { status: 'ready', requests, items, warnings: distinct(warnings) };
}

/** A skip result (a module function, not a closure made on every call). */
function skipped(type: string, reason: SkipReason, message: string, warnings: string[] = []): MapResult {
  return { status: 'skipped', reason, message: `${type}: ${message}`, warnings };
}

/**
 * The warnings a skip after the rules carries: those collected, or (for a caller that collects
 * none, `made` given) the attribution's, the identifiers' and the rules' made now.
 */
function skipWarningsOf(
  type: string, plugin: DestinationPlugin, collected: string[],
  made: { attribution: Parameters<typeof attributionWarnings>[2]; hashed: HashedIdentifiers | undefined; rules: string[] } | null,
): string[] {
  return distinct(made === null ? collected : [
    ...attributionWarnings(type, plugin, made.attribution),
    ...(made.hashed === undefined ? [] : identifierWarnings(type, made.hashed.warnings)),
    ...made.rules.map((w) => `${type}: ${w}`),
  ]);
}

/** The warnings without repeats, in order (the list itself when empty: fan-out collects none). */
function distinct(warnings: string[]): string[] {
  return warnings.length < 2 ? warnings : [...new Set(warnings)];
}

/** What attribution is read from for one event (everything but the destination's settings); `receivedAt`: the event's. */
export function attributionSources(
  event: NormalizedEvent, account: Pick<Account, 'scriptId'>, receivedAt: number, specs: readonly NamedAttributionSpec[],
): Omit<AttributionInput, 'settings'> {
  return {
    cookies: event.cookies, url: event.context.url, landingUrl: event.context.landing_url, user: event.user ?? null,
    now: receivedAt, salt: account.scriptId, specs,
  };
}

type Gate = { kind: 'none' } | { kind: 'gated'; key: keyof Consent } | { kind: 'invalid'; value: string };

/** The gates a destination can have, made once (consentGate runs per destination and event). */
const NO_GATE: Gate = { kind: 'none' };
const GATES = new Map<string, Gate>(CONSENT_KEYS.map((key) => [key, { kind: 'gated', key }]));

/** The given specs, with the plugin's own added when it is not among them. */
function specsWith(plugin: DestinationPlugin, specs: readonly NamedAttributionSpec[] | undefined): readonly NamedAttributionSpec[] {
  const list = specs ?? [];
  if (plugin.attribution === undefined) return list;
  for (let i = 0; i < list.length; i++) if (list[i].name === plugin.name) return list;
  return [...list, { name: plugin.name, spec: plugin.attribution }];
}

/** `consent_category` from the settings wins over the plugin's own consent flag. */
function consentGate(own: ConsentGate | undefined, override: unknown): Gate {
  if (override === undefined || override === null || override === '') {
    return own === null || own === undefined ? NO_GATE : GATES.get(own) ?? { kind: 'gated', key: own };
  }
  const gate = typeof override === 'string' ? GATES.get(override) : undefined;
  if (gate !== undefined) return gate;
  return { kind: 'invalid', value: String(override) };
}
