// Operator actions on an account's destinations: the config is validated against the
// plugin's settings schema on every add and update; secrets are masked whenever a
// destination is shown.
import { randomBytes } from 'node:crypto';
import type { DestinationRecord, Store } from '../store/types.ts';
import type { PluginRegistry } from './load-plugins.ts';

export class DestinationInputError extends Error {
  override name = 'DestinationInputError';
  /** `usage`: the config names a setting this type never takes (the CLI exits 2, as for a wrong command line). */
  constructor(message: string, readonly usage = false) {
    super(message);
  }
}

export const MASK = '****';

/** A view of a destination safe to print: every secret setting replaced by `****`. */
export interface MaskedDestination {
  id: string;
  script_id: string;
  type: string;
  name: string;
  enabled: boolean;
  config: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

export function maskSettings(settings: Record<string, unknown>, secretKeys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(settings)) out[k] = secretKeys.includes(k) && v !== undefined && v !== null ? MASK : v;
  return out;
}

export interface DestinationServiceOptions {
  /** Extra check on every URL-bearing setting (SSRF guard); returns a reason or null. */
  checkUrl?: (url: string) => string | null;
}

export function createDestinationService(store: Store, plugins: PluginRegistry, opts: DestinationServiceOptions = {}) {
  function pluginOf(type: string) {
    const p = plugins.get(type);
    if (!p) {
      const known = [...plugins.keys()].join(', ') || 'none loaded';
      throw new DestinationInputError(`unknown destination type "${type}" (plugins: ${known})`);
    }
    return p;
  }

  function validate(type: string, settings: unknown): Record<string, unknown> {
    if (settings === null || typeof settings !== 'object' || Array.isArray(settings)) {
      throw new DestinationInputError('config must be a JSON object');
    }
    const { plugin, validateSettings } = pluginOf(type);
    // Test mode on a platform that has none would record the "test" as a real conversion.
    if (plugin.noTestMode !== undefined && Object.hasOwn(settings, 'test_event_code')) {
      throw new DestinationInputError(`invalid ${type} config: test_event_code is refused: ${type} has no test mode (${plugin.noTestMode}), ` +
        'so every event sent to it is recorded as a real conversion; remove test_event_code', true);
    }
    const problems = validateSettings(settings);
    if (problems.length > 0) throw new DestinationInputError(`invalid ${type} config: ${problems.join('; ')}`);
    const s = settings as Record<string, unknown>;
    for (const key of ['endpoint', 'url', 'token_url']) {
      const v = s[key];
      if (typeof v === 'string' && opts.checkUrl) {
        const reason = opts.checkUrl(v);
        if (reason) throw new DestinationInputError(`config.${key}: ${reason}`);
      }
    }
    return s;
  }

  async function requireAccount(scriptId: string): Promise<void> {
    if (!(await store.accounts.get(scriptId))) throw new DestinationInputError(`no account with script id "${scriptId}"`);
  }

  async function requireDestination(scriptId: string, id: string): Promise<DestinationRecord> {
    await requireAccount(scriptId);
    const d = await store.destinations.get(scriptId, id);
    if (!d) throw new DestinationInputError(`account ${scriptId} has no destination "${id}"`);
    return d;
  }

  const view = (d: DestinationRecord): MaskedDestination => ({
    id: d.id,
    script_id: d.scriptId,
    type: d.type,
    name: d.name,
    enabled: d.enabled,
    config: maskSettings(d.settings, plugins.get(d.type)?.plugin.secretSettings ?? Object.keys(d.settings)),
    created_at: new Date(d.createdAt).toISOString(),
    updated_at: new Date(d.updatedAt).toISOString(),
  });

  return {
    view,
    async add(scriptId: string, type: string, settings: unknown, name?: string): Promise<DestinationRecord> {
      await requireAccount(scriptId);
      const valid = validate(type, settings);
      return store.destinations.add({
        id: `dst_${randomBytes(8).toString('hex')}`,
        scriptId,
        type,
        name: name?.trim() || type,
        enabled: true,
        settings: valid,
      });
    },
    async list(scriptId: string): Promise<DestinationRecord[]> {
      await requireAccount(scriptId);
      return store.destinations.list(scriptId);
    },
    /** The stored destination, secrets included (for merging a config patch). */
    async get(scriptId: string, id: string): Promise<DestinationRecord> {
      return requireDestination(scriptId, id);
    },
    async update(scriptId: string, id: string, patch: { settings?: unknown; enabled?: boolean; name?: string }): Promise<DestinationRecord> {
      const current = await requireDestination(scriptId, id);
      const settings = patch.settings === undefined ? undefined : validate(current.type, patch.settings);
      return (await store.destinations.update(scriptId, id, { settings, enabled: patch.enabled, name: patch.name?.trim() || undefined }))!;
    },
    /** Removes the destination; returns how many of its pending deliveries were canceled. */
    async remove(scriptId: string, id: string): Promise<{ canceled: number }> {
      await requireDestination(scriptId, id);
      const { canceled } = await store.destinations.remove(scriptId, id);
      return { canceled };
    },
  };
}

export type DestinationService = ReturnType<typeof createDestinationService>;
