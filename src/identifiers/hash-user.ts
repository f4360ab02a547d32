// A user with every identifier field hashed in place: what mapping rules read when they may
// not see identifiers in clear. Rules write whatever they read into a request, so the
// plaintext must never reach them; they get the same SHA-256 a destination would be sent.
import type { NormaliseForms } from './forms.ts';
import { hashIdentifiers, type NormalMemo } from './hash-identifiers.ts';
import type { NormaliserName } from './normalisers.ts';
import type { IdentifierTable } from './spec.ts';
import type { UserField } from './types.ts';

/** Each field the identifier step reads, and the normaliser its value goes through. */
const NORMALISER_OF: Readonly<Record<UserField, NormaliserName>> = {
  id: 'externalId',
  external_id: 'externalId',
  email: 'email',
  phone: 'phone',
  first_name: 'name',
  last_name: 'name',
  street: 'street',
  city: 'city',
  region: 'region',
  postal_code: 'postalCode',
  country: 'country',
};

/** Field → the same field hashed, every value of a list kept. */
const IN_PLACE: IdentifierTable = Object.fromEntries(Object.entries(NORMALISER_OF).map(([field, normalise]) => [
  field, { from: field as UserField, normalise, hash: true, max: Number.MAX_SAFE_INTEGER },
]));

export interface HashUserOptions {
  /** The destination's normal forms, so a rule reads the hash the destination is sent. */
  forms?: NormaliseForms;
  /** The account's default country (alpha-2), for phone numbers written nationally. */
  defaultCountry?: string;
  /** Values already normalised and hashed for the same event (its destinations' identifiers): each hashed once. */
  memo?: NormalMemo;
}

/**
 * The user, key order kept, with each identifier field (e-mail, phone, names, street, city,
 * region, postal code, country, id, external_id) replaced by the SHA-256 hex of its
 * normalised value; a value that cannot be normalised is left out, one that already is a
 * SHA-256 hex passes through lower-cased. Other fields (order counts, properties) are kept.
 *
 * @example
 * hashUserFields({ email: ' Jane@Example.com ', orders_total_number: 3 })
 * // → { email: sha256('jane@example.com'), orders_total_number: 3 }
 */
export function hashUserFields(user: Readonly<Record<string, unknown>>, opts: HashUserOptions = {}): Record<string, unknown> {
  const { fields } = hashIdentifiers(user, { table: IN_PLACE, forms: opts.forms }, { defaultCountry: opts.defaultCountry, memo: opts.memo });
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(user)) {
    if (!Object.hasOwn(NORMALISER_OF, key)) {
      out[key] = user[key];
      continue;
    }
    const hashed = fields[key];
    if (hashed === undefined) continue;
    out[key] = Array.isArray(user[key]) && !Array.isArray(hashed) ? [hashed] : hashed;
  }
  return out;
}
