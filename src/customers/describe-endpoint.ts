// An endpoint as operators see it (`customers list --json`, the admin API): path, auth,
// rate limits and folder, without anything secret.
import { TEST_RATE_DEFAULT } from './rate-limiter.ts';
import type { LoadedEndpoint } from './types.ts';

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
}

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
  };
}
