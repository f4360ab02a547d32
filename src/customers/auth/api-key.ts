// API key in a header. Stored as SHA-256 only and compared digest to digest in constant
// time (tokenMatches), so neither the key's length nor a prefix leaks through timing.
import { AppError } from '../../errors.ts';
import { hashToken, tokenMatches } from '../../accounts/credentials.ts';
import type { ApiKeyAuthConfig } from '../endpoint-config.ts';
import { readEnv, type AuthCheck } from './types.ts';

const MAX_KEY_LENGTH = 512;

export function apiKeyAuth(cfg: ApiKeyAuthConfig, env: NodeJS.ProcessEnv): AuthCheck {
  const header = cfg.header ?? 'X-Api-Key';
  const name = header.toLowerCase();
  const hashes = cfg.key_sha256 ?? [hashToken(readEnv(env, cfg.key_env!))];
  return {
    type: 'api_key',
    needsBody: false,
    check(req) {
      const key = req.header(name);
      if (key === '') return new AppError('AUTH_MISSING', 401, `The ${header} header is missing`, { field: header });
      if (key.length > MAX_KEY_LENGTH || !tokenMatches(key, hashes)) {
        return new AppError('INVALID_CREDENTIALS', 401, `The ${header} header does not hold a valid key for this endpoint`, { field: header });
      }
      return null;
    },
  };
}
