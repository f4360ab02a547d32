// The base URL the running service answers on, announced in DATA_DIR when it starts: the CLI
// prints it as an account's base_url. A CLI run by hand reads the project's settings, not the
// port the service was given in its own environment (`PORT=3000 npm start`, a unit's
// Environment=PORT=…), so without this it would print the default port's URL.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from './config.ts';

/** The announcement's file in DATA_DIR. */
export const SERVICE_URL_FILE = 'service-url.json';

/** PUBLIC_BASE_URL when set, else the port the service listens on at localhost. */
export function serviceBaseUrl(config: Pick<Config, 'publicBaseUrl' | 'publicBaseUrlSet'>, port: number): string {
  return config.publicBaseUrlSet ? config.publicBaseUrl : `http://localhost:${port}`;
}

/** Writes `baseUrl` to DATA_DIR (made if missing, 0700), replacing what an earlier start wrote. */
export function announceServiceUrl(dataDir: string, baseUrl: string, now = Date.now()): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, SERVICE_URL_FILE);
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify({ base_url: baseUrl, pid: process.pid, started_at: new Date(now).toISOString() }) + '\n', { mode: 0o600 });
  renameSync(temp, file);
}

/** The base URL the service last announced in DATA_DIR, or null when none did (or the file is not one). */
export function announcedServiceUrl(dataDir: string): string | null {
  try {
    const { base_url: url } = JSON.parse(readFileSync(join(dataDir, SERVICE_URL_FILE), 'utf8')) as { base_url?: unknown };
    return typeof url === 'string' && /^https?:\/\/[^\s]+$/.test(url) ? url : null;
  } catch {
    return null;
  }
}

/**
 * The base URL the CLI prints for accounts: PUBLIC_BASE_URL when its settings set it, else
 * what the service announced in DATA_DIR, else http://localhost:PORT from its settings.
 */
export function cliBaseUrl(config: Pick<Config, 'publicBaseUrl' | 'publicBaseUrlSet' | 'dataDir'>): string {
  return config.publicBaseUrlSet ? config.publicBaseUrl : announcedServiceUrl(config.dataDir) ?? config.publicBaseUrl;
}
