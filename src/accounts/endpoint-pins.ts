// Which names an account's custom endpoint pins may use: an endpoint folder's name, never a
// key an object answers through its prototype (`__proto__=1` on a plain object sets nothing
// and reports success). The map itself is prototype-free (store/pin-map.ts).
export { pinMap } from '../store/pin-map.ts';

const ENDPOINT_NAME_RE = /^[a-z0-9][a-z0-9-]{0,62}$/;
/** Keys an object answers through its prototype: never an endpoint pin, though they look like endpoint names. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Why `name` cannot be pinned (not an endpoint folder's name, or a prototype key), or null. */
export function endpointNameProblem(name: string): string | null {
  if (ENDPOINT_NAME_RE.test(name) && !PROTOTYPE_KEYS.has(name)) return null;
  return `"${name.slice(0, 64)}" is not an endpoint name: lowercase letters, digits and dashes, and not __proto__, constructor or prototype`;
}
