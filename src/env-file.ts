// One configuration for the server and the CLI: a `.env` file in the working directory
// (or the file ENV_FILE names) is read by `npm start` and by `npx tracklane` alike, so
// both use the same DATA_DIR, and with it the same database. Real environment variables
// win over the file. Parsed with Node's own `util.parseEnv` (KEY=value lines, `#`
// comments, quoted values, `export` prefixes).
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';

export class EnvFileError extends Error {
  override name = 'ConfigError';
}

export interface EnvFileResult {
  /** The file read, or null when there was none. */
  file: string | null;
  /** Variables taken from it (those not already set in the environment). */
  applied: string[];
}

/**
 * Reads `.env` (or ENV_FILE) into `env`, leaving variables that are already set alone.
 * A missing `.env` is fine; a missing ENV_FILE or an unreadable file is an EnvFileError.
 */
export function loadEnvFile(opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): EnvFileResult {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  const named = env.ENV_FILE !== undefined && env.ENV_FILE !== '';
  const file = resolve(cwd, named ? env.ENV_FILE! : '.env');
  if (!existsSync(file)) {
    if (named) throw new EnvFileError(`ENV_FILE names ${file}, which does not exist`);
    return { file: null, applied: [] };
  }
  let parsed: Record<string, string>;
  try {
    parsed = parseEnv(readFileSync(file, 'utf8')) as Record<string, string>;
  } catch (err) {
    throw new EnvFileError(`${file} could not be read: ${(err as Error).message}`);
  }
  const applied: string[] = [];
  for (const [key, value] of Object.entries(parsed)) {
    if (env[key] !== undefined) continue;
    env[key] = value;
    applied.push(key);
  }
  return { file, applied };
}
