// Loads every destination plugin folder of the plugin folders (the shipped plugins/, then those
// PLUGINS_DIR lists) and checks its definition. A broken plugin stops start with an error naming
// its folder, as does a plugin type found in two folders; a new destination is one new folder,
// with nothing else to register.
import { readdirSync, existsSync, realpathSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { ValidateFunction } from 'ajv';
import { compileDraft07Schema } from '../schema/ajv-draft07.ts';
import { nativeValidator, type NativeSchemaOf } from './native-schema.ts';
import { checkIdentifierSpec } from '../identifiers/index.ts';
import type { AttributionSpec, NamedAttributionSpec } from '../attribution/index.ts';
import type { DestinationPlugin } from './types.ts';
import { ACCESS_TOKEN_OR_OAUTH, OAUTH_SECRET_SETTINGS, OAUTH_SETTINGS_PROPERTIES, oauthSettingsProblems } from './oauth-settings.ts';
import { loadModule } from '../load-module.ts';

export class PluginLoadError extends Error {
  override name = 'PluginLoadError';
  constructor(
    readonly folder: string,
    reason: string,
  ) {
    super(`plugin ${folder}: ${reason}`);
  }
}

export interface LoadedPlugin {
  plugin: DestinationPlugin;
  folder: string;
  /** Validates an operator's settings; errors as `path: message` strings. */
  validateSettings(settings: unknown): string[];
}

export type PluginRegistry = ReadonlyMap<string, LoadedPlugin>;

/** A plugin type: its folder name. */
export const NAME_RE = /^[a-z][a-z0-9-]{1,39}$/;
const SEMVER_RE = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/;
const CATEGORY_RE = /^[a-z][a-z-]{0,39}$/;
const CONSENT_GATES: readonly unknown[] = ['analytics', 'marketing', 'personalization', null];
/** Keys every plugin's settings must allow (docs/api.md: optional config on any destination). */
const COMMON_KEYS = ['endpoint', 'events', 'consent_category'];

/** Checks one definition; returns the problems found. */
export function checkDefinition(def: unknown, folderName: string): string[] {
  const p = def as Partial<DestinationPlugin> | null;
  if (!p || typeof p !== 'object') return ['index.ts must default-export the plugin definition object'];
  const problems: string[] = [];
  if (p.name !== folderName) problems.push(`name must equal the folder name "${folderName}", got ${JSON.stringify(p.name)}`);
  if (!NAME_RE.test(folderName)) problems.push('the folder name must be lowercase letters, digits and dashes');
  if (typeof p.version !== 'string' || !SEMVER_RE.test(p.version)) problems.push('version must be a semver string such as 1.0.0');
  if (typeof p.category !== 'string' || !CATEGORY_RE.test(p.category)) problems.push('category must be a lowercase word such as analytics or advertising');
  if (!CONSENT_GATES.includes(p.consent)) problems.push('consent must be analytics, marketing, personalization or null');
  if (typeof p.description !== 'string' || p.description === '') problems.push('description must be a non-empty string');
  if (!p.settingsSchema || typeof p.settingsSchema !== 'object') problems.push('settingsSchema must be a JSON Schema object');
  else {
    const props = (p.settingsSchema as { properties?: Record<string, unknown> }).properties ?? {};
    for (const k of COMMON_KEYS) if (!(k in props)) problems.push(`settingsSchema must allow the common key "${k}"`);
  }
  if (!Array.isArray(p.secretSettings) || p.secretSettings.some((s) => typeof s !== 'string')) {
    problems.push('secretSettings must be an array of setting names');
  }
  problems.push(...checkOAuthSpec(p));
  problems.push(...checkIdentifierSpec(p.identifiers));
  if (p.plaintextIdentifiers !== undefined && typeof p.plaintextIdentifiers !== 'function') problems.push('plaintextIdentifiers must be a function');
  problems.push(...checkAttributionSpec(p.attribution));
  if (p.matchKeys !== undefined && (!Array.isArray(p.matchKeys) || p.matchKeys.some((k) => typeof k !== 'string'))) {
    problems.push('matchKeys must be an array of attribution keys');
  }
  if (p.nativeSchema !== undefined && (typeof p.nativeSchema !== 'object' || p.nativeSchema === null)) problems.push('nativeSchema must be a JSON Schema object');
  if (!p.batch || !Number.isInteger(p.batch.maxEvents) || p.batch.maxEvents < 1) problems.push('batch.maxEvents must be a positive integer');
  if (typeof p.buildRequests !== 'function') problems.push('buildRequests must be a function');
  if (typeof p.classifyResponse !== 'function') problems.push('classifyResponse must be a function');
  if (p.unmatchable !== undefined && typeof p.unmatchable !== 'function') problems.push('unmatchable must be a function');
  if (p.noTestMode !== undefined && (typeof p.noTestMode !== 'string' || p.noTestMode === '')) problems.push('noTestMode must be a non-empty sentence');
  if (p.validationRequests !== undefined && typeof p.validationRequests !== 'function') problems.push('validationRequests must be a function');
  return problems;
}

/** A plugin with `oauth` names an http(s) token endpoint, takes every OAuth key and keeps its secrets secret. */
function checkOAuthSpec(p: Partial<DestinationPlugin>): string[] {
  if (p.oauth === undefined) return [];
  const url = (p.oauth as { tokenUrl?: unknown } | null)?.tokenUrl;
  if (typeof url !== 'string' || !/^https?:\/\/[^/]/.test(url)) return ['oauth must be {tokenUrl: "https://…"}'];
  const props = (p.settingsSchema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
  const problems: string[] = [];
  for (const k of ['access_token', ...Object.keys(OAUTH_SETTINGS_PROPERTIES)]) if (!(k in props)) problems.push(`oauth: settingsSchema must allow "${k}"`);
  for (const k of ['access_token', ...OAUTH_SECRET_SETTINGS]) if (!p.secretSettings?.includes(k)) problems.push(`oauth: secretSettings must list "${k}"`);
  if (JSON.stringify((p.settingsSchema as { anyOf?: unknown }).anyOf) !== JSON.stringify(ACCESS_TOKEN_OR_OAUTH.anyOf)) {
    problems.push('oauth: settingsSchema must spread ACCESS_TOKEN_OR_OAUTH (access_token, or the OAuth keys)');
  }
  return problems;
}

function checkAttributionSpec(spec: unknown): string[] {
  if (spec === undefined) return [];
  const s = spec as Partial<AttributionSpec> | null;
  if (!s || typeof s !== 'object' || !s.ids || typeof s.ids !== 'object') return ['attribution must be {ids: {<key>: [{cookie|param, parse?, build?}]}, refine?}'];
  const problems: string[] = [];
  for (const [key, sources] of Object.entries(s.ids)) {
    const ok = Array.isArray(sources) && sources.every((src) => (typeof src?.cookie === 'string') !== (typeof src?.param === 'string'));
    if (!ok) problems.push(`attribution.ids.${key} must be a list of sources, each with either cookie or param`);
  }
  if (s.refine !== undefined && typeof s.refine !== 'function') problems.push('attribution.refine must be a function');
  return problems;
}

/** Every plugin's attribution spec, by name, in folder order (what mapEventForDestination reads for rule data). */
export function attributionSpecsOf(registry: PluginRegistry): NamedAttributionSpec[] {
  const cached = SPECS.get(registry);
  if (cached) return cached;
  const specs = [...registry.values()].flatMap(({ plugin }) => (plugin.attribution ? [{ name: plugin.name, spec: plugin.attribution }] : []));
  SPECS.set(registry, specs);
  return specs;
}
const SPECS = new WeakMap<PluginRegistry, NamedAttributionSpec[]>();

/** Each destination type's native schema, as the rule checks ask for it. */
export function nativeSchemasOf(registry: PluginRegistry): NativeSchemaOf {
  return (type) => registry.get(type)?.plugin.nativeSchema;
}

function settingsValidator(plugin: DestinationPlugin, folder: string): (s: unknown) => string[] {
  let validate: ValidateFunction;
  try {
    validate = compileDraft07Schema(plugin.settingsSchema);
  } catch (e) {
    throw new PluginLoadError(folder, `settingsSchema does not compile: ${(e as Error).message}`);
  }
  return (settings) => {
    // The credential rule (ACCESS_TOKEN_OR_OAUTH) is worded once, saying what is missing; a
    // half-given OAuth form is refused even beside an access_token.
    const oauth = plugin.oauth !== undefined && typeof settings === 'object' && settings !== null;
    if (validate(settings)) return oauth ? oauthSettingsProblems(settings as Record<string, unknown>) : [];
    const errors = (validate.errors ?? []).filter((e) => !(oauth && e.schemaPath.startsWith('#/anyOf')));
    return [...errors.map((e) => {
      const where = e.instancePath ? e.instancePath.slice(1).replaceAll('/', '.') : 'config';
      const extra = e.keyword === 'additionalProperties' ? ` "${(e.params as { additionalProperty: string }).additionalProperty}"` : '';
      return `${where}: ${e.message}${extra}`;
    }), ...(oauth ? oauthSettingsProblems(settings as Record<string, unknown>) : [])];
  };
}

/** PLUGINS_DIR as the loaders take it: one folder, or several in load order (Config.pluginsDirs). */
export type PluginFolders = string | readonly string[];

export const pluginFolderList = (dirs: PluginFolders): readonly string[] => (typeof dirs === 'string' ? [dirs] : dirs);

/** Each plugin folder in `dirs` (a missing folder holds none), by type, in load order; one linked in twice counts once. */
export function pluginFoldersIn(dirs: PluginFolders): Map<string, string> {
  const found = new Map<string, string>();
  for (const dir of pluginFolderList(dirs)) {
    if (!existsSync(dir)) continue;
    const names = readdirSync(dir).filter((f) => !f.startsWith('.') && statSync(join(dir, f)).isDirectory()).sort();
    for (const name of names) {
      const folder = join(dir, name);
      const first = found.get(name);
      if (first === undefined) found.set(name, folder);
      else if (realpathSync(first) !== realpathSync(folder)) {
        throw new PluginLoadError(folder, `the plugin type "${name}" is also ${first}: a type is one folder; rename one (its folder and its name) or list only one of the two folders`);
      }
    }
  }
  return found;
}

/**
 * Loads (loadModule: under either tsx loader) and checks every plugin folder in `dirs`, in
 * order (`only`: just the plugins of those types, for a command that needs a few). Throws
 * PluginLoadError naming the first broken one, or a type found in two folders.
 */
export async function loadPlugins(dirs: PluginFolders, only?: readonly string[]): Promise<PluginRegistry> {
  const registry = new Map<string, LoadedPlugin>();
  for (const [name, folder] of pluginFoldersIn(dirs)) {
    if (only === undefined || only.includes(name)) registry.set(name, await loadPluginFolder(folder));
  }
  return registry;
}

const loadedOnce = new Map<string, Promise<PluginRegistry>>();

/** loadPlugins once per thread for the same folders: worker threads load plugins themselves (they are code, not data), on their first task. */
export function pluginsOnce(dirs: PluginFolders): Promise<PluginRegistry> {
  const key = pluginFolderList(dirs).join('\0');
  let registry = loadedOnce.get(key);
  if (registry === undefined) loadedOnce.set(key, (registry = loadPlugins(dirs)));
  return registry;
}

/** Loads and checks one plugin folder (its type is the folder's name); throws PluginLoadError naming it when broken. */
export async function loadPluginFolder(folder: string): Promise<LoadedPlugin> {
  const name = basename(folder);
  const entry = join(folder, 'index.ts');
  if (!existsSync(entry)) throw new PluginLoadError(folder, 'has no index.ts');
  let mod: { default?: unknown };
  try {
    mod = (await loadModule(entry)) as { default?: unknown };
  } catch (e) {
    throw new PluginLoadError(folder, `index.ts failed to load: ${(e as Error).message}`);
  }
  const problems = checkDefinition(mod.default, name);
  if (problems.length > 0) throw new PluginLoadError(folder, problems.join('; '));
  const plugin = mod.default as DestinationPlugin;
  if (plugin.nativeSchema !== undefined) {
    try {
      nativeValidator(plugin.nativeSchema);
    } catch (e) {
      throw new PluginLoadError(folder, `nativeSchema does not compile: ${(e as Error).message}`);
    }
  }
  return { plugin, folder, validateSettings: settingsValidator(plugin, folder) };
}
