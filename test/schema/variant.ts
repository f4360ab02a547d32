// Builds test payloads as edited deep copies of a valid base, so each table body differs from
// a known-good payload in exactly the way its case names. The results are plain JSON data.

/** Put this as an edit's value to delete the member instead of setting it. */
export const REMOVE = Symbol('remove');

/** An edit: a dotted path (`products.0.price`) and the value to set there, or REMOVE. */
export type Edit = [path: string, value: unknown];

/** A deep copy of `base` with `edits` applied in order. Intermediate objects must exist. */
export function variant<T>(base: T, ...edits: Edit[]): T {
  const copy = structuredClone(base);
  for (const [path, value] of edits) {
    const keys = path.split('.');
    const last = keys.pop() as string;
    let target = copy as unknown as Record<string, unknown>;
    for (const k of keys) {
      const next = target[k];
      if (typeof next !== 'object' || next === null) throw new Error(`variant: no object at ${k} in ${path}`);
      target = next as Record<string, unknown>;
    }
    if (value === REMOVE) delete target[last];
    else target[last] = value;
  }
  return copy;
}
