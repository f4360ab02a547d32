// Flat dot-path keys → nested objects, for plugins that merge a rule's output
// (`{"custom_data.value": 12}`) and the pipeline's identifiers (`user_data.em`) into a body.
// Key order is first appearance, so the bytes of a body built with it are stable.

type Json = Record<string, unknown>;

/** Segments that would reach an object's prototype; such keys are ignored, never set. */
const UNSAFE = new Set(['__proto__', 'prototype', 'constructor']);

function isPlainObject(v: unknown): v is Json {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * Sets `value` at `path` inside `target`, creating plain objects on the way; a non-object in
 * the way is replaced. A plain-object value is merged into what is already there, so
 * `a.b = {c: 1}` and then `a = {d: 2}` give `{a: {b: {c: 1}, d: 2}}`. Arrays are values.
 *
 * @example
 * const o = {}; setPath(o, 'user_data.em', 'ab12…'); // → { user_data: { em: 'ab12…' } }
 */
export function setPath(target: Json, path: string, value: unknown): void {
  const segments = path.split('.');
  if (segments.some((s) => s === '' || UNSAFE.has(s))) return;
  let node = target;
  for (const segment of segments.slice(0, -1)) {
    const next = node[segment];
    if (isPlainObject(next)) node = next;
    else node = node[segment] = {};
  }
  const last = segments[segments.length - 1];
  const current = node[last];
  if (isPlainObject(value) && isPlainObject(current)) mergeDotPaths(current, value);
  else node[last] = isPlainObject(value) ? mergeDotPaths({}, value) : value;
}

/**
 * Merges `source` (keys may be dot paths, values may be nested objects) into `target` and
 * returns it. Existing keys keep their position; new keys are appended. `undefined` values
 * are skipped.
 */
export function mergeDotPaths(target: Json, source: Json): Json {
  for (const [key, value] of Object.entries(source)) {
    if (value !== undefined) setPath(target, key, value);
  }
  return target;
}

/** `{"a.b": 1, "a.c": 2}` → `{a: {b: 1, c: 2}}`. */
export function expandDotPaths(flat: Json): Json {
  return mergeDotPaths({}, flat);
}

/**
 * The object at `key` once `flat` is expanded: always a fresh object, `{}` when no path
 * starts with `key.`; paths elsewhere are dropped. For a body section built from the
 * pipeline's identifiers (`user_data.em` → `user_data`).
 *
 * @example expandBranch({ 'user_data.em': 'ab12…', 'user.email': 'cd34…' }, 'user_data') // → { em: 'ab12…' }
 */
export function expandBranch(flat: Json, key: string): Json {
  const holder: Json = { [key]: {} };
  mergeDotPaths(holder, flat);
  return holder[key] as Json;
}
