// An account's endpoint pins (endpoint name → version) as both stores read them and the
// account service writes them: an object without a prototype, so no name can reach or set
// one (`pins["constructor"]` on a plain object answers a function; `__proto__` sets nothing).

/** A prototype-free copy of `pins`, or of the stored JSON text. */
export function pinMap<V = number>(pins: Record<string, V> | string): Record<string, V> {
  const own = typeof pins === 'string' ? (JSON.parse(pins) as Record<string, V>) : pins;
  return Object.assign(Object.create(null) as Record<string, V>, own);
}
