// What one extra authentication mechanism of a custom endpoint sees and answers.
import type { AppError } from '../../errors.ts';

export interface AuthRequest {
  /** A request header by lowercase name; '' when absent. */
  header(name: string): string;
  /** Client address as Koa reports it (X-Forwarded-For is honoured: the app sets `proxy`). */
  ip: string;
  /** The body exactly as received, for signatures; present for mechanisms with needsBody. */
  rawBody?: string;
  /** Milliseconds since the epoch. */
  now: number;
}

export interface AuthCheck {
  readonly type: 'api_key' | 'jwt' | 'hmac' | 'ip_allow';
  /** True when the check needs the raw body, so it runs after the body is read. */
  readonly needsBody: boolean;
  /** Null when the request passes; otherwise the refusal to throw. */
  check(req: AuthRequest): Promise<AppError | null> | AppError | null;
}

/** Thrown at load for a mechanism that cannot be built (missing variable, bad key, bad CIDR). */
export class AuthConfigError extends Error {
  override name = 'AuthConfigError';
}

/** Reads a variable endpoint.json names; a missing one stops start. */
export function readEnv(env: NodeJS.ProcessEnv, name: string): string {
  const v = env[name];
  if (v === undefined || v === '') throw new AuthConfigError(`the environment variable ${name} is not set`);
  return v;
}
