// JWT bearer tokens via jose: HS256 with a shared secret or RS256 with a public key, the
// algorithm pinned (no `alg` confusion), iss and aud required, exp required, nbf honoured.
import { errors as joseErrors, importSPKI, jwtVerify, type CryptoKey } from 'jose';
import { AppError } from '../../errors.ts';
import type { JwtAuthConfig } from '../endpoint-config.ts';
import { AuthConfigError, readEnv, type AuthCheck } from './types.ts';

const MAX_TOKEN_LENGTH = 8192;
const BEARER = /^Bearer[ \t]+([A-Za-z0-9_.-]+)[ \t]*$/i;

async function keyOf(cfg: JwtAuthConfig, env: NodeJS.ProcessEnv): Promise<Uint8Array | CryptoKey> {
  if (cfg.algorithm === 'HS256') {
    const secret = cfg.secret ?? readEnv(env, cfg.secret_env!);
    if (Buffer.byteLength(secret) < 32) throw new AuthConfigError('an HS256 secret must be at least 32 bytes');
    return new TextEncoder().encode(secret);
  }
  const pem = (cfg.public_key ?? readEnv(env, cfg.public_key_env!)).replaceAll('\\n', '\n');
  try {
    return await importSPKI(pem, 'RS256');
  } catch (e) {
    throw new AuthConfigError(`the RS256 public key is not a PEM SPKI RSA key: ${(e as Error).message}`);
  }
}

/** Why a token failed, in words a client developer can act on (never the token itself). */
function reason(e: unknown): string {
  if (e instanceof joseErrors.JWTExpired) return 'the token has expired';
  if (e instanceof joseErrors.JWTClaimValidationFailed) {
    if (e.claim === 'nbf') return 'the token is not valid yet (nbf)';
    if (e.claim === 'iat') return 'the token is too old (iat)';
    if (e.reason === 'missing') return `the token has no "${e.claim}" claim`;
    return `the token's "${e.claim}" claim is not the one this endpoint expects`;
  }
  if (e instanceof joseErrors.JOSEAlgNotAllowed) return 'the token is signed with an algorithm this endpoint does not accept';
  if (e instanceof joseErrors.JWSSignatureVerificationFailed) return 'the token signature is not valid';
  return 'the token is malformed';
}

export async function jwtAuth(cfg: JwtAuthConfig, env: NodeJS.ProcessEnv): Promise<AuthCheck> {
  const key = await keyOf(cfg, env);
  const header = cfg.header ?? 'Authorization';
  const name = header.toLowerCase();
  const bearer = name === 'authorization';
  return {
    type: 'jwt',
    needsBody: false,
    async check(req) {
      const value = req.header(name);
      if (value === '') return new AppError('AUTH_MISSING', 401, `The ${header} header with a JWT is missing`, { field: header });
      const token = bearer ? BEARER.exec(value)?.[1] : value.trim();
      if (!token || token.length > MAX_TOKEN_LENGTH) {
        return new AppError('INVALID_CREDENTIALS', 401, bearer ? 'The Authorization header must be "Bearer <JWT>"' : `The ${header} header must hold a JWT`, { field: header });
      }
      try {
        await jwtVerify(token, key, {
          algorithms: [cfg.algorithm],
          issuer: cfg.issuer,
          audience: cfg.audience,
          requiredClaims: ['exp'],
          clockTolerance: cfg.clock_tolerance_seconds ?? 30,
          maxTokenAge: cfg.max_age_seconds,
          currentDate: new Date(req.now),
        });
        return null;
      } catch (e) {
        return new AppError('INVALID_CREDENTIALS', 401, `JWT refused: ${reason(e)}`, { field: header });
      }
    },
  };
}
