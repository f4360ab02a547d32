// Cookie lookup over the payload's `cookies` array (or a plain name → value map), shared by
// attribution and the rules' `cookie` operation.
// Values are trimmed and, when percent-encoded, decoded; a bad encoding keeps the raw text.

export type CookieInput =
  | ReadonlyArray<{ name?: unknown; value?: unknown }>
  | Readonly<Record<string, unknown>>
  | undefined
  | null;

export interface CookieJar {
  /** Every value under that exact name, in payload order (duplicates happen across domains). Read-only. */
  all(name: string): string[];
  /** Names starting with `prefix`, each with its values, in payload order. */
  withPrefix(prefix: string): Array<{ name: string; value: string }>;
}

export function cookieJar(input: CookieInput): CookieJar {
  const jar = new Jar();
  if (Array.isArray(input)) for (const c of input) jar.add(c?.name, c?.value);
  else if (input != null) for (const name in input) if (Object.hasOwn(input, name)) jar.add(name, (input as Record<string, unknown>)[name]);
  return jar;
}

/** Nothing found: one shared, frozen list (callers only read what a jar returns). */
const NONE: string[] = Object.freeze([]) as unknown as string[];

/**
 * A class with plain loops rather than closures and filter/map chains: attribution asks
 * for each cookie name of every loaded destination, for every event delivered.
 */
class Jar implements CookieJar {
  private readonly entries: Array<{ name: string; value: string }> = [];

  add(name: unknown, value: unknown): void {
    if (typeof name === 'string' && typeof value === 'string' && value.trim() !== '') {
      this.entries.push({ name: name.trim(), value: decode(value.trim()) });
    }
  }

  all(name: string): string[] {
    let out = NONE;
    for (const e of this.entries) {
      if (e.name !== name) continue;
      if (out === NONE) out = [];
      out.push(e.value);
    }
    return out;
  }

  withPrefix(prefix: string): Array<{ name: string; value: string }> {
    const out: Array<{ name: string; value: string }> = [];
    for (const e of this.entries) if (e.name.startsWith(prefix)) out.push(e);
    return out;
  }
}

function decode(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
