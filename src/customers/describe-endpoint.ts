// An endpoint as operators see it (`customers list --json`, the admin API): path, auth,
// rate limits, folder and versions, without anything secret; with the store's counts, who
// uses which version and who is pinned to it.
import { TEST_RATE_DEFAULT } from './rate-limiter.ts';
import type { LoadedEndpoint } from './types.ts';
import type { VersionState } from './endpoint-versions.ts';
import type { VersionUsage } from '../store/custom-record-contract.ts';
import type { Account } from '../accounts/types.ts';

export interface VersionUsageJson {
  script_id: string;
  env: 'production' | 'test';
  uses: number;
  first_used_at: string;
  last_used_at: string;
}

export interface VersionJson {
  version: number;
  state: VersionState;
  /** Deprecated versions: ISO 8601. */
  deprecated_at: string | null;
  sunset: string | null;
  /** The folder holding its schema.json, handler.ts and example.json. */
  folder: string;
  /** Accounts whose requests get this version when they name none. */
  pinned_accounts?: string[];
  /** Uses per account and env since the version first answered (absent when the store was not read). */
  usage?: VersionUsageJson[];
}

/** One loaded endpoint as `customers list --json` prints it. */
export interface EndpointJson {
  customer: string;
  endpoint: string;
  path: string;
  description: string;
  auth: string[];
  /** production null: the account's intake rate applies. */
  rate_limit: { production: { per_minute: number; burst: number } | null; test: { per_minute: number; burst: number } };
  folder: string;
  current_version: number;
  versions: VersionJson[];
}

const isoOrNull = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function endpointJson(ep: LoadedEndpoint): EndpointJson {
  const r = ep.config.rate_limit ?? {};
  const limit = (c: { per_minute: number; burst?: number }) => ({ per_minute: c.per_minute, burst: c.burst ?? c.per_minute });
  return {
    customer: ep.customer,
    endpoint: ep.name,
    path: `/service/custom/${ep.name}`,
    description: ep.config.description,
    auth: ep.auth.types,
    rate_limit: {
      production: r.production ? limit(r.production) : null,
      test: r.test ? limit(r.test) : { per_minute: TEST_RATE_DEFAULT.perMinute, burst: TEST_RATE_DEFAULT.burst },
    },
    folder: ep.folder,
    current_version: ep.current,
    versions: [...ep.versions.values()].map((v) => ({
      version: v.version, state: v.state, deprecated_at: isoOrNull(v.deprecatedAt), sunset: isoOrNull(v.sunsetAt), folder: v.dir,
    })),
  };
}

/** endpointJson plus, per version, the accounts pinned to it and its uses (`accounts`: those bound to the endpoint's customer). */
export function endpointUsageJson(ep: LoadedEndpoint, usage: readonly VersionUsage[], accounts: readonly Account[]): EndpointJson {
  const base = endpointJson(ep);
  const bound = accounts.filter((a) => a.customer === ep.customer);
  return {
    ...base,
    versions: base.versions.map((v) => ({
      ...v,
      pinned_accounts: bound.filter((a) => a.endpointPins?.[ep.name] === v.version).map((a) => a.scriptId),
      usage: usage.filter((u) => u.customer === ep.customer && u.endpoint === ep.name && u.version === v.version).map((u) => ({
        script_id: u.scriptId, env: u.env, uses: u.uses, first_used_at: new Date(u.firstUsedAt).toISOString(), last_used_at: new Date(u.lastUsedAt).toISOString(),
      })),
    })),
  };
}
