// Where an endpoint's versions live and what state each is in, read from its folder and
// endpoint.json: so old clients keep a shape while a new one ships, and an operator can
// retire a version deliberately. Layout only here; loading each version is the loader's.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { checkEndpointConfig, parseVersionDate, type EndpointConfig } from './endpoint-config.ts';

/** The files of one version; at the endpoint's root (a folder without versions: version 1) or in versions/<n>/. */
export const VERSION_FILES = ['schema.json', 'handler.ts', 'example.json'] as const;
export const VERSIONS_DIR = 'versions';
const VERSION_NAME_RE = /^[1-9][0-9]{0,3}$/;

export type VersionState = 'current' | 'active' | 'deprecated';

export interface VersionPlan {
  version: number;
  /** The folder holding this version's schema.json, handler.ts and example.json. */
  dir: string;
  state: VersionState;
  /** Deprecated versions: when they were deprecated and when they stop being served (ms). */
  deprecatedAt: number | null;
  sunsetAt: number | null;
}

export interface EndpointPlan {
  current: number;
  /** Ascending by version. */
  versions: VersionPlan[];
}

/** Version folders of an endpoint folder, by number; a problem as a sentence. */
export function versionDirs(folder: string): Map<number, string> | string {
  const dirs = new Map<number, string>();
  if (VERSION_FILES.some((f) => existsSync(join(folder, f)))) dirs.set(1, folder);
  const base = join(folder, VERSIONS_DIR);
  if (!existsSync(base)) return dirs;
  if (!statSync(base).isDirectory()) return `${VERSIONS_DIR} must be a folder of version folders (1, 2, …)`;
  for (const name of readdirSync(base).sort()) {
    if (name.startsWith('.') || !statSync(join(base, name)).isDirectory()) continue;
    if (!VERSION_NAME_RE.test(name)) return `${VERSIONS_DIR}/${name}: version folders are named by number (1, 2, …)`;
    const n = Number(name);
    if (dirs.has(n)) return `version 1 is both at the endpoint's root and in ${VERSIONS_DIR}/1: keep one`;
    dirs.set(n, join(base, name));
  }
  return dirs;
}

/** Which versions an endpoint serves and their states; a problem as a sentence. */
export function planVersions(folder: string, config: EndpointConfig): EndpointPlan | string {
  const dirs = versionDirs(folder);
  if (typeof dirs === 'string') return dirs;
  if (dirs.size === 0) return `missing ${VERSION_FILES.join(', ')} (at the endpoint's root, or in ${VERSIONS_DIR}/1/)`;
  const listed = config.versions ?? {};
  const hasVersionsDir = [...dirs.values()].some((d) => d !== folder);
  if (config.current_version === undefined && (hasVersionsDir || Object.keys(listed).length > 0)) {
    return `endpoint.json: current_version is required once the endpoint has versions (${[...dirs.keys()].join(', ')})`;
  }
  const current = config.current_version ?? 1;
  if (!dirs.has(current)) return `endpoint.json: current_version ${current} has no folder (${VERSIONS_DIR}/${current}/)`;
  if (listed[String(current)] !== undefined) return `endpoint.json: versions.${current} is the current version; list only the other versions`;
  for (const key of Object.keys(listed)) {
    if (!dirs.has(Number(key))) {
      return `endpoint.json: versions.${key} has no folder; a retired version leaves endpoint.json and the folder together`;
    }
  }
  const versions: VersionPlan[] = [];
  for (const [version, dir] of [...dirs.entries()].sort(([a], [b]) => a - b)) {
    if (version === current) {
      versions.push({ version, dir, state: 'current', deprecatedAt: null, sunsetAt: null });
      continue;
    }
    const s = listed[String(version)];
    if (s === undefined) {
      return `version ${version} is not listed in endpoint.json versions: give it a state (active, or deprecated with deprecated_at and sunset) or remove its folder`;
    }
    versions.push({
      version, dir, state: s.state,
      deprecatedAt: s.deprecated_at === undefined ? null : parseVersionDate(s.deprecated_at),
      sunsetAt: s.sunset === undefined ? null : parseVersionDate(s.sunset),
    });
  }
  return { current, versions };
}

/** The versions an endpoint folder serves, read without loading handlers (pins are checked against it); a problem as a sentence. */
export function readEndpointPlan(folder: string): EndpointPlan | string {
  let config: unknown;
  try {
    config = JSON.parse(readFileSync(join(folder, 'endpoint.json'), 'utf8'));
  } catch (e) {
    return `${join(folder, 'endpoint.json')}: ${(e as Error).message}`;
  }
  const problems = checkEndpointConfig(config);
  return problems.length > 0 ? `endpoint.json: ${problems.join('; ')}` : planVersions(folder, config as EndpointConfig);
}

/** `1 (deprecated, sunset 2026-09-30), 2 (current)`: the versions an endpoint serves, for messages. */
export function describeServed(versions: Iterable<Pick<VersionPlan, 'version' | 'state' | 'sunsetAt'>>): string {
  return [...versions].map((v) => v.state === 'deprecated' && v.sunsetAt !== null
    ? `${v.version} (deprecated, sunset ${new Date(v.sunsetAt).toISOString().slice(0, 10)})`
    : v.state === 'current' ? `${v.version} (current)` : String(v.version)).join(', ');
}
