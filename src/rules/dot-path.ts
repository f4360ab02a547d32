// Flat dot-path keys → nested objects. Rule outputs and the `object` operation are
// written as `"user_data.em": …` because a literal one-key object is a json-logic operation.

const FORBIDDEN_SEGMENTS = new Set(['__proto__', 'prototype', 'constructor']);

/** Why `key` is not a usable dot path, or null when it is. */
export function dotPathProblem(key: string): string | null {
  if (key === '') return 'a key must not be empty';
  const segments = key.split('.');
  if (segments.some((s) => s === '')) return `key "${key}" has an empty segment`;
  const bad = segments.find((s) => FORBIDDEN_SEGMENTS.has(s));
  if (bad !== undefined) return `key "${key}" uses the reserved name "${bad}"`;
  return null;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * Sets `key` (a dot path) in `target`, creating objects on the way. A later key wins over
 * an earlier leaf; descending through a value that is not an object throws.
 * @example setPath(o, 'params.value', 5) // o.params.value === 5
 */
export function setPath(target: Record<string, unknown>, key: string, value: unknown): void {
  const problem = dotPathProblem(key);
  if (problem !== null) throw new Error(problem);
  const segments = key.split('.');
  let node = target;
  for (let i = 0; i < segments.length - 1; i++) {
    const s = segments[i];
    const next = Object.hasOwn(node, s) ? node[s] : undefined;
    if (next === undefined) {
      const child: Record<string, unknown> = {};
      node[s] = child;
      node = child;
    } else if (isPlainObject(next)) {
      node = next;
    } else {
      throw new Error(`key "${key}" conflicts with "${segments.slice(0, i + 1).join('.')}", which is not an object`);
    }
  }
  node[segments[segments.length - 1]] = value;
}
