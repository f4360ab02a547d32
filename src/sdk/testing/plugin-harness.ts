// The golden harness every plugin's golden.test.ts runs: payload → validateEvent → the rules
// in rules/ (over the plugin's own rules.json), as the repository ships them, → mapEventForDestination, exactly as the pipeline does, then assertions on the
// request that comes out. The expected requests stay literals in each plugin's test.
// previewEvent does the same for a plugin folder anywhere, loaded by the service's loader.
import { expect } from 'chai';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { loadPluginFolder } from '../../destinations/load-plugins.ts';
import { SPEC_EVENT_NAMES, type Account } from '../../accounts/types.ts';
import type { DestinationPlugin, OutboundRequest } from '../../destinations/types.ts';
import { mapEventForDestination, type MapResult, type SkipReason } from '../../pipeline/map-event.ts';
import { formatRuleError, loadRules } from '../../rules/load-rules.ts';
import type { RuleSpec } from '../../rules/types.ts';
import { validateEvent } from '../../schema/validate-event.ts';
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
  /**
   * The plugin's folder, whose rules.json holds its default rules: needed for a plugin that is
   * not one of those the package ships (a folder of its own, anywhere); by default the shipped
   * plugins folder's of the plugin's name.
   */
  folder?: string;
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
      rules ??= accountRules(account.scriptId, plugin.name, setup.folder);
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

/** The rules in force for one account and destination type: rules/ over the plugin's own rules.json (in `folder`, or the shipped plugins'). */
function accountRules(scriptId: string, destinationType: string, folder?: string): readonly RuleSpec[] {
  const { rulesDir, pluginsDir } = shippedFolders();
  const alone = folder === undefined ? undefined : folderAlone(folder);
  try {
    const loaded = loadRules(rulesDir, { pluginsDir: alone ?? pluginsDir });
    if (!loaded.ok) throw new Error(`the rules do not load:\n${loaded.errors.map(formatRuleError).join('\n')}`);
    return loaded.ruleSet.rulesFor(scriptId, destinationType);
  } finally {
    if (alone !== undefined) rmSync(alone, { recursive: true, force: true });
  }
}

/** A temp plugins folder holding `folder` alone (linked), so the rule loader reads its rules.json and no sibling's. */
function folderAlone(folder: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'tl-plugin-alone-'));
  symlinkSync(resolve(folder), join(dir, basename(resolve(folder))), 'dir');
  return dir;
}

export interface PreviewOptions extends Partial<Omit<GoldenSetup, 'plugin' | 'folder' | 'settings'>> {
  /** The destination's settings (checked against the plugin's schema first). */
  settings: Record<string, unknown>;
  /** The event id the request carries when the payload has no event.id. Default `evt-preview`. */
  eventId?: string;
}

/**
 * Previews one event through the plugin in `folder`, as endpoint 2 would: the folder loaded and
 * checked by the service's loader, the settings checked by its schema, the payload validated,
 * the rules (rules/ over the folder's rules.json) applied, the requests built.
 *
 * @example
 * const result = await previewEvent(fileURLToPath(new URL('.', import.meta.url)), payload, { settings: { api_key: 'k' } });
 * const [request] = expectReady(result);
 */
export async function previewEvent(folder: string, payload: unknown, opts: PreviewOptions): Promise<MapResult> {
  const { plugin, validateSettings } = await loadPluginFolder(resolve(folder));
  const problems = validateSettings(opts.settings);
  expect(problems, 'the settings must pass the plugin\'s settingsSchema').to.deep.equal([]);
  const now = opts.now ?? Date.now();
  const harness = goldenHarness({
    plugin,
    folder: resolve(folder),
    destination: opts.destination ?? { id: 'dst_preview', name: plugin.name },
    account: opts.account ?? { scriptId: 'PREVIEW1', country: 'US', host: 'https://shop.example' },
    settings: opts.settings,
    receivedAt: opts.receivedAt ?? now,
    now,
  });
  const id = (payload as { event?: { id?: unknown } } | null)?.event?.id;
  return harness.run(payload, typeof id === 'string' ? id : (opts.eventId ?? 'evt-preview'));
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
