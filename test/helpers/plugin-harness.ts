// The golden harness every plugin's golden.test.ts runs: payload → validateEvent → the rules
// in rules/ (over each plugin's own rules.json), as the repository ships them, → mapEventForDestination, exactly as the pipeline does, then assertions on the
// request that comes out. The expected requests stay literals in each plugin's test.
import { expect } from 'chai';
import { SPEC_EVENT_NAMES, type Account } from '../../src/accounts/types.ts';
import type { DestinationPlugin, OutboundRequest } from '../../src/destinations/types.ts';
import { mapEventForDestination, type MapResult, type SkipReason } from '../../src/pipeline/map-event.ts';
import { formatRuleError, loadRules } from '../../src/rules/load-rules.ts';
import type { RuleSpec } from '../../src/rules/types.ts';
import { validateEvent } from '../../src/schema/validate-event.ts';
import { shippedFolders } from './shipped-folders.ts';

export interface GoldenSetup {
  plugin: DestinationPlugin;
  /** The configured destination's id and display name; its type is the plugin's name. */
  destination: { id: string; name: string };
  account: Pick<Account, 'scriptId' | 'country' | 'host'>;
  /** Settings run() uses when a test gives none. */
  settings: Record<string, unknown>;
  receivedAt: number;
  /** The clock mapEventForDestination gets (fbc first-seen times, signing timestamps). */
  now: number;
}

export interface GoldenHarness {
  /**
   * Validates `payload` (it must be valid: the nine spec events approved, 19 % default tax)
   * and maps it for an enabled destination of the plugin with the account's rules.
   */
  /** `ruleOverride` replaces the rules of rules/ (an account's own rules, say). */
  run(payload: unknown, eventId: string, settings?: Record<string, unknown>, ruleOverride?: readonly RuleSpec[]): MapResult;
}

/**
 * @example
 * const golden = goldenHarness({ plugin, destination: { id: 'dst_meta', name: 'Meta' }, account, settings, receivedAt, now });
 * expectOneRequest(golden.run(payload, 'ORD-1'), { url, headers, eventId: 'ORD-1', body: { data: [event] } });
 */
export function goldenHarness(setup: GoldenSetup): GoldenHarness {
  const { plugin, account } = setup;
  let rules: readonly RuleSpec[] | undefined;
  return {
    run(payload, eventId, settings = setup.settings, ruleOverride) {
      const validated = validateEvent(payload, { approvedEvents: new Set(SPEC_EVENT_NAMES), defaultTaxRate: 19, host: account.host });
      expect(validated.errors, `the golden payload must be valid: ${JSON.stringify(validated.errors)}`).to.deep.equal([]);
      rules ??= accountRules(account.scriptId, plugin.name);
      return mapEventForDestination({
        plugin,
        destination: { id: setup.destination.id, type: plugin.name, name: setup.destination.name, enabled: true, settings },
        event: validated.event!,
        eventId,
        receivedAt: setup.receivedAt,
        account,
        rules: ruleOverride ?? rules,
        now: setup.now,
      });
    },
  };
}

/** The rules in force for one account and destination type: rules/ over the plugins' own rules.json. */
function accountRules(scriptId: string, destinationType: string): readonly RuleSpec[] {
  const { rulesDir, pluginsDir } = shippedFolders();
  const loaded = loadRules(rulesDir, { pluginsDir });
  if (!loaded.ok) throw new Error(`rules/ does not load:\n${loaded.errors.map(formatRuleError).join('\n')}`);
  return loaded.ruleSet.rulesFor(scriptId, destinationType);
}

/** Asserts the event was mapped to requests and returns them. */
export function expectReady(result: MapResult): OutboundRequest[] {
  expect(result.status, JSON.stringify(result)).to.equal('ready');
  return result.status === 'ready' ? result.requests : [];
}

export interface ExpectedRequest {
  url: string;
  /** The one event id the request carries. */
  eventId: string;
  /** Compared in full when given (the webhook checks its signature headers itself). */
  headers?: Record<string, string>;
  /** Compared parsed, and byte for byte as its JSON.stringify (key order included), when given. */
  body?: unknown;
}

/** Asserts the event became exactly one POST as expected, and returns it. */
export function expectOneRequest(result: MapResult, expected: ExpectedRequest): OutboundRequest {
  const requests = expectReady(result);
  expect(requests).to.have.length(1);
  const [req] = requests;
  expect(req.method).to.equal('POST');
  expect(req.url).to.equal(expected.url);
  if (expected.headers !== undefined) expect(req.headers).to.deep.equal(expected.headers);
  expect(req.eventIds).to.deep.equal([expected.eventId]);
  if (expected.body !== undefined) {
    expect(JSON.parse(req.body)).to.deep.equal(expected.body);
    expect(req.body, 'byte for byte, key order included').to.equal(JSON.stringify(expected.body));
  }
  return req;
}

/** Asserts the event was skipped, for this reason. */
export function expectSkipped(result: MapResult, reason: SkipReason): void {
  expect(result.status).to.equal('skipped');
  if (result.status === 'skipped') expect(result.reason).to.equal(reason);
}
