// What a destination declares about identifiers: which native fields it fills, from which
// user field, through which generic normaliser, whether hashed, and the normal form each
// normaliser writes for it. Plain data (it crosses into the hash worker threads);
// hash-identifiers.ts interprets it.
import type { NormaliseForms } from './forms.ts';
import { NORMALISERS, type NormaliserName } from './normalisers.ts';
import type { UserField } from './types.ts';

export interface IdentifierRule {
  /** User field to read; with a list, the first one that holds a value. */
  from: UserField | readonly UserField[];
  normalise: NormaliserName;
  /** SHA-256 the normalised value. A pre-hashed input passes through only where this is true. */
  hash: boolean;
  /** At most this many values (distinct after normalisation); default 1. */
  max?: number;
}

/**
 * Native field → rule. Keys are dot paths inside one native event object (e.g. the GA4
 * request body, one Meta `data[]` element), or any names the plugin's buildRequests reads.
 */
export type IdentifierTable = Readonly<Record<string, IdentifierRule>>;

/** A plugin's `identifiers`: its table and the forms its normalisers use. */
export interface IdentifierSpec {
  table: IdentifierTable;
  /** Unset keys take each normaliser's default (see forms.ts). */
  forms?: NormaliseForms;
}

/** The user fields a table reads; what crosses a thread boundary is cut down to these. Computed once per table object. */
export function sourceFields(table: IdentifierTable): readonly UserField[] {
  let fields = SOURCE_FIELDS.get(table);
  if (fields === undefined) {
    fields = Object.freeze([...new Set(Object.values(table).flatMap((rule) => (typeof rule.from === 'string' ? [rule.from] : [...rule.from])))]);
    SOURCE_FIELDS.set(table, fields);
  }
  return fields;
}
const SOURCE_FIELDS = new WeakMap<IdentifierTable, readonly UserField[]>();

const USER_FIELDS: readonly UserField[] = [
  'id', 'external_id', 'email', 'phone', 'first_name', 'last_name', 'street', 'city', 'region', 'postal_code', 'country',
];

/** What is wrong with a plugin's `identifiers` (null is allowed); empty when nothing. */
export function checkIdentifierSpec(spec: unknown): string[] {
  if (spec === null) return [];
  const s = spec as Partial<IdentifierSpec> | undefined;
  if (!s || typeof s !== 'object' || !s.table || typeof s.table !== 'object') {
    return ['identifiers must be null or {table: {<native field>: {from, normalise, hash, max?}}, forms?}'];
  }
  const problems: string[] = [];
  for (const [target, rule] of Object.entries(s.table)) {
    const from = typeof rule?.from === 'string' ? [rule.from] : Array.isArray(rule?.from) ? rule.from : [];
    if (from.length === 0 || from.some((f) => !USER_FIELDS.includes(f))) {
      problems.push(`identifiers.table["${target}"].from must name user fields (${USER_FIELDS.join(', ')})`);
    }
    if (typeof rule?.normalise !== 'string' || !Object.hasOwn(NORMALISERS, rule.normalise)) {
      problems.push(`identifiers.table["${target}"].normalise must be one of ${Object.keys(NORMALISERS).join(', ')}`);
    }
    if (typeof rule?.hash !== 'boolean') problems.push(`identifiers.table["${target}"].hash must be true or false`);
  }
  if (s.forms !== undefined && (typeof s.forms !== 'object' || s.forms === null)) problems.push('identifiers.forms must be an object');
  return problems;
}

/**
 * The customer-information fields several ad platforms name alike (em, ph, fn, ln, ct, st,
 * zp, country, external_id), all hashed, under `prefix`: a table a plugin may use as it is
 * or extend. E-mails and phones keep up to `max` values.
 * @example hashedContactTable('user_data', 5)['user_data.em'] // { from: 'email', normalise: 'email', hash: true, max: 5 }
 */
export function hashedContactTable(prefix: string, max: number): IdentifierTable {
  const at = (name: string) => `${prefix}.${name}`;
  return {
    [at('em')]: { from: 'email', normalise: 'email', hash: true, max },
    [at('ph')]: { from: 'phone', normalise: 'phone', hash: true, max },
    [at('fn')]: { from: 'first_name', normalise: 'name', hash: true },
    [at('ln')]: { from: 'last_name', normalise: 'name', hash: true },
    [at('ct')]: { from: 'city', normalise: 'city', hash: true },
    [at('st')]: { from: 'region', normalise: 'region', hash: true },
    [at('zp')]: { from: 'postal_code', normalise: 'postalCode', hash: true },
    [at('country')]: { from: 'country', normalise: 'country', hash: true },
    [at('external_id')]: { from: ['external_id', 'id'], normalise: 'externalId', hash: true },
  };
}
