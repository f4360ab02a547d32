// Builds an endpoint's extra authentication from endpoint.json at load: keys imported,
// variables read, CIDRs parsed once. Checks that need only headers run before the body is
// read; the HMAC signature runs right after, before the body is validated.
import type { AuthConfig } from '../endpoint-config.ts';
import { apiKeyAuth } from './api-key.ts';
import { hmacAuth } from './hmac.ts';
import { ipAllowAuth } from './ip-allow-list.ts';
import { jwtAuth } from './jwt.ts';
import type { AuthCheck } from './types.ts';

export interface EndpointAuth {
  /** Mechanism names in endpoint.json order, for listings. */
  types: AuthCheck['type'][];
  beforeBody: AuthCheck[];
  afterBody: AuthCheck[];
}

async function build(cfg: AuthConfig, env: NodeJS.ProcessEnv): Promise<AuthCheck> {
  switch (cfg.type) {
    case 'api_key':
      return apiKeyAuth(cfg, env);
    case 'jwt':
      return jwtAuth(cfg, env);
    case 'hmac':
      return hmacAuth(cfg, env);
    case 'ip_allow':
      return ipAllowAuth(cfg);
  }
}

/** Throws AuthConfigError (with the index of the mechanism) when one cannot be built. */
export async function buildEndpointAuth(configs: readonly AuthConfig[], env: NodeJS.ProcessEnv): Promise<EndpointAuth> {
  const checks: AuthCheck[] = [];
  for (const [i, cfg] of configs.entries()) {
    try {
      checks.push(await build(cfg, env));
    } catch (e) {
      (e as Error).message = `auth.${i} (${cfg.type}): ${(e as Error).message}`;
      throw e;
    }
  }
  // The address check first: cheapest, and a stranger learns nothing about the others.
  const order = (c: AuthCheck) => (c.type === 'ip_allow' ? 0 : 1);
  return {
    types: checks.map((c) => c.type),
    beforeBody: checks.filter((c) => !c.needsBody).sort((a, b) => order(a) - order(b)),
    afterBody: checks.filter((c) => c.needsBody),
  };
}
