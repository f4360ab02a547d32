// Cookie lookup over the payload's `cookies` array (or a plain name → value map), shared by
// attribution and the rules' `cookie` operation.
// Values are trimmed and, when percent-encoded, decoded; a bad encoding keeps the raw text.

export type CookieInput =
  | ReadonlyArray<{ name?: unknown; value?: unknown }>
  | Readonly<Record<string, unknown>>
  | undefined
  | null;

export interface CookieJar {
  /** Every value under that exact name, in payload order (duplicates happen across domains). */
  all(name: string): string[];
  /** Names starting with `prefix`, each with its values, in payload order. */
  withPrefix(prefix: string): Array<{ name: string; value: string }>;
}

export function cookieJar(input: CookieInput): CookieJar {
  const entries: Array<{ name: string; value: string }> = [];
  const push = (name: unknown, value: unknown) => {
    if (typeof name === 'string' && typeof value === 'string' && value.trim() !== '') {
      entries.push({ name: name.trim(), value: decode(value.trim()) });
    }
  };
  if (Array.isArray(input)) for (const c of input) push(c?.name, c?.value);
  else if (input != null) for (const [name, value] of Object.entries(input)) push(name, value);
  return {
    all: (name) => entries.filter((e) => e.name === name).map((e) => e.value),
    withPrefix: (prefix) => entries.filter((e) => e.name.startsWith(prefix)),
  };
}

function decode(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
