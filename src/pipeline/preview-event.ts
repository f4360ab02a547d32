// Endpoint 2's `preview` and `rules preview`: for each destination of the account, the
// exact request(s) it would be sent (secrets masked) or why it gets nothing. Identifiers
// for all destinations are hashed in one batch through the worker pool.
import type { Account } from '../accounts/types.ts';
import { attributionSpecsOf, type PluginRegistry } from '../destinations/load-plugins.ts';
import type { RuleSet } from '../rules/rule-set.ts';
import type { NormalizedEvent } from '../schema/types.ts';
import type { DestinationRecord } from '../store/types.ts';
import type { HashPool } from '../workers/pool.ts';
import type { HashItem } from '../workers/hash-worker.ts';
import type { HashedIdentifiers } from './identifiers/index.ts';
import { mapEventForDestination, maskRequest, type SkipReason } from './map-event.ts';
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
}

export interface PreviewInput {
  account: Pick<Account, 'scriptId' | 'country' | 'host'>;
  destinations: readonly DestinationRecord[];
  event: NormalizedEvent;
  eventId: string;
  receivedAt: number;
  now: number;
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
  const { account, event } = input;
  const rules = deps.rules();

  // One batch for every destination that sends hashed identifiers.
  const hashItems: HashItem[] = [];
  const hashIndex = new Map<string, number>();
  for (const d of input.destinations) {
    const ids = deps.plugins.get(d.type)?.plugin.identifiers;
    if (!ids || !event.user) continue;
    hashIndex.set(d.id, hashItems.length);
    hashItems.push({ user: event.user, spec: ids, defaultCountry: account.country ?? undefined });
  }
  let hashed: HashedIdentifiers[] = [];
  if (hashItems.length > 0 && deps.pool) hashed = await deps.pool.hashBatch(hashItems);

  return input.destinations.map((d): DestinationPreview => {
    const base = { destination_id: d.id, type: d.type, name: d.name };
    const loaded = deps.plugins.get(d.type);
    if (!loaded) {
      return { ...base, status: 'skipped', reason: 'plugin_missing', message: `${d.type}: no plugin of this type is loaded`, requests: [], warnings: [] };
    }
    const i = hashIndex.get(d.id);
    let result;
    try {
      result = mapEventForDestination({
        plugin: loaded.plugin,
        // Secrets never enter the preview: it is built with `****` in their place.
        destination: { ...d, settings: maskedSettings(loaded.plugin, d.settings) },
        event,
        eventId: input.eventId,
        receivedAt: input.receivedAt,
        account,
        rules: rules.rulesFor(account.scriptId, d.type),
        now: input.now,
        attributionSpecs: attributionSpecsOf(deps.plugins),
        hashed: i === undefined ? undefined : hashed[i],
      });
    } catch (e) {
      return { ...base, status: 'skipped', reason: 'build_failed', message: (e as Error).message, requests: [], warnings: [] };
    }
    if (result.status === 'skipped') {
      return { ...base, status: 'skipped', reason: result.reason, message: result.message, requests: [], warnings: result.warnings };
    }
    return {
      ...base,
      status: 'would_send',
      requests: result.requests.map((r) => {
        const m = maskRequest(r, loaded.plugin);
        return { method: m.method, url: m.url, headers: m.headers, body: parseBody(m.body), raw_body: m.body };
      }),
      warnings: result.warnings,
    };
  });
}
