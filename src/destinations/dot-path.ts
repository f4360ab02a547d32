// Flat dot-path keys → nested objects, the one implementation: rule outputs and the
// `object` operation (`"user_data.em": …`, because a literal one-key object is a json-logic
// operation) set them strictly; plugins merge a rule's output and the pipeline's
// identifiers into a body leniently. Key order is first appearance, so the bytes of a body
// built with it are stable.

type Json = Record<string, unknown>;

/** Segments that would reach an object's prototype. */
const UNSAFE = new Set(['__proto__', 'prototype', 'constructor']);

/** Why `key` is not a usable dot path, or null when it is. */
export function dotPathProblem(key: string): string | null {
  if (key === '') return 'a key must not be empty';
  const segments = key.split('.');
  if (segments.some((s) => s === '')) return `key "${key}" has an empty segment`;
  const bad = segments.find((s) => UNSAFE.has(s));
  if (bad !== undefined) return `key "${key}" uses the reserved name "${bad}"`;
  return null;
}

/** Keys seen so far → their segments, or why they are unusable: rule and plugin keys repeat for every event. */
const parsedKeys = new Map<string, readonly string[] | string>();
const MAX_PARSED_KEYS = 10_000;

function parsedKey(key: string): readonly string[] | string {
  let p = parsedKeys.get(key);
  if (p === undefined) {
    p = dotPathProblem(key) ?? key.split('.');
    if (parsedKeys.size >= MAX_PARSED_KEYS) parsedKeys.clear(); // keys taken from event data must not grow it without bound
    parsedKeys.set(key, p);
  }
  return p;
}

export function isPlainObject(v: unknown): v is Json {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * How setPath treats what is in its way:
 * - `strict` (rule outputs): a bad key or a non-object on the path throws, naming the
 *   conflict; the value is set as given (a later key wins over an earlier leaf).
 * - `merge` (plugin bodies): a bad key is ignored, a non-object on the path is replaced,
 *   and a plain-object value is merged into the object already there.
 */
export type SetMode = 'strict' | 'merge';

/**
 * Sets `value` at the dot path `key` inside `target`, creating plain objects on the way.
 * @example setPath(o, 'params.value', 5, 'strict') // o.params.value === 5
 * @example setPath(o, 'user_data', { em: 'ab12…' }, 'merge') // merged into o.user_data
 */
export function setPath(target: Json, key: string, value: unknown, mode: SetMode): void {
  const segments = parsedKey(key);
  if (typeof segments === 'string') {
    if (mode === 'strict') throw new Error(segments);
    return;
  }
  let node = target;
  for (let i = 0; i < segments.length - 1; i++) {
    const s = segments[i];
    const next = Object.hasOwn(node, s) ? node[s] : undefined;
    if (isPlainObject(next)) {
      node = next;
    } else if (next === undefined || mode === 'merge') {
      const child: Json = {};
      node[s] = child;
      node = child;
    } else {
      throw new Error(`key "${key}" conflicts with "${segments.slice(0, i + 1).join('.')}", which is not an object`);
    }
  }
  const last = segments[segments.length - 1];
  if (mode === 'strict') {
    node[last] = value;
    return;
  }
  const current = node[last];
  if (isPlainObject(value) && isPlainObject(current)) mergeDotPaths(current, value);
  else node[last] = isPlainObject(value) ? mergeDotPaths({}, value) : value;
}

/**
 * Merges `source` (keys may be dot paths, values may be nested objects) into `target` and
 * returns it. Existing keys keep their position; new keys are appended. `undefined` values
 * are skipped. A source already expanded (a rule's output: no dot path, no undefined member
 * at any depth) is not copied: its objects are placed in `target` as they are, and merged
 * into only where `target` already holds an object there; so `target` shares them, and
 * plugins write only into the objects they made themselves.
 */
export function mergeDotPaths(target: Json, source: Json): Json {
  return needsExpanding(source, 0) ? mergePaths(target, source) : mergeExpanded(target, source);
}

/** mergeDotPaths for a source that needs expanding: every plain object copied through setPath. */
function mergePaths(target: Json, source: Json): Json {
  for (const key in source) {
    if (!Object.hasOwn(source, key)) continue;
    const value = source[key];
    if (value !== undefined) setPath(target, key, value, 'merge');
  }
  return target;
}

/** mergeDotPaths for an expanded source: what gives the same result as copying, without the copies. */
function mergeExpanded(target: Json, source: Json): Json {
  for (const key in source) {
    if (!Object.hasOwn(source, key)) continue;
    const value = source[key];
    const current = target[key];
    if (isPlainObject(value) && isPlainObject(current)) mergeExpanded(current, value);
    else target[key] = value;
  }
  return target;
}

/** `{"a.b": 1, "a.c": 2}` → `{a: {b: 1, c: 2}}`. */
export function expandDotPaths(flat: Json): Json {
  return mergeDotPaths({}, flat);
}

/**
 * What expandDotPaths(flat) would give, for reading only: `flat` itself when expanding
 * would change nothing (rule outputs arrive expanded), else the expanded copy.
 */
export function asExpanded(flat: Json): Json {
  return needsExpanding(flat, 0) ? expandDotPaths(flat) : flat;
}

/** Whether expanding `o` would change it: a dot-path or unusable key, or an undefined member, at any depth of plain objects. */
function needsExpanding(o: Json, depth: number): boolean {
  if (depth > 32) return true;
  for (const k in o) {
    if (!Object.hasOwn(o, k)) continue;
    const v = o[k];
    if (typeof parsedKey(k) === 'string' || k.includes('.') || v === undefined) return true;
    if (isPlainObject(v) && needsExpanding(v, depth + 1)) return true;
  }
  return false;
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
