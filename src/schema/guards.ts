// Small type guards and helpers shared by the schema rules. The rules run on payloads that
// may have failed the schema, so every access goes through one of these checks.

/** A JSON object (not null, not an array). */
export type JsonObject = Record<string, unknown>;

export const isRecord = (v: unknown): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const SHA256_HEX = /^[0-9a-f]{64}$/i;

/** True for a SHA-256 digest written as 64 hex characters: a pre-hashed e-mail or phone. */
export const isSha256Hex = (s: string): boolean => s.length === 64 && SHA256_HEX.test(s);

/**
 * Deletes the members of `keys` whose value is null: the payload rules treat null as absent,
 * and the normalised event never carries a null for an optional field.
 */
export function dropNulls(o: JsonObject, keys: readonly string[]): void {
  for (const k of keys) if (o[k] === null) delete o[k];
}

/** The string as a JSON literal, shortened so a message never echoes a huge value. */
export function quote(v: unknown, max = 40): string {
  const s = typeof v === 'string' ? v : String(v);
  return JSON.stringify(s.length > max ? `${s.slice(0, max)}…` : s);
}

/** ISO 4217 codes are matched case-insensitively; the normalised event carries them upper-case. */
export function upperCaseCurrency(o: JsonObject): void {
  if (typeof o.currency === 'string') o.currency = o.currency.toUpperCase();
}
