// `destinations update --config` as a JSON merge patch (RFC 7386): keys given replace
// their value, `null` removes a key, nested objects merge the same way, anything else
// (arrays included) replaces. So changing one setting never drops the secrets beside it.

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface MergeResult {
  settings: Json;
  /** Top-level keys whose value changed or was added. */
  changed: string[];
  removed: string[];
}

export function mergeSettings(current: Json, patch: unknown): MergeResult {
  if (!isObject(patch)) return { settings: patch as Json, changed: [], removed: [] };
  const settings: Json = { ...current };
  const changed: string[] = [];
  const removed: string[] = [];
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      if (key in settings) removed.push(key);
      delete settings[key];
      continue;
    }
    const next = isObject(value) && isObject(settings[key]) ? mergeSettings(settings[key] as Json, value).settings : value;
    if (JSON.stringify(next) !== JSON.stringify(settings[key])) changed.push(key);
    settings[key] = next;
  }
  return { settings, changed, removed };
}
