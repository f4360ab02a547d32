// Which identifiers each platform receives, under which native field, normalised how and
// whether hashed.
// Data only; hash-identifiers.ts interprets it.
import type { NormaliserName } from './normalisers.ts';
import type { Platform, UserField } from './types.ts';

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
 * Native field → rule. Keys are dot paths inside one native event object: the GA4
 * request body, one Meta `data[]` element, one TikTok `data[]` element.
 * Google Ads reuses the `google` values under its own names (hashedEmail, hashedPhoneNumber,
 * addressInfo.*), since GA4 and Ads share one normalisation.
 */
export type IdentifierTable = Readonly<Record<string, IdentifierRule>>;

export const IDENTIFIER_TABLES: Readonly<Record<Platform, IdentifierTable>> = {
  google: {
    'user_id': { from: ['external_id', 'id'], normalise: 'externalId', hash: false },
    'user_data.sha256_email_address': { from: 'email', normalise: 'email', hash: true, max: 3 },
    'user_data.sha256_phone_number': { from: 'phone', normalise: 'phone', hash: true, max: 3 },
    'user_data.address.sha256_first_name': { from: 'first_name', normalise: 'name', hash: true },
    'user_data.address.sha256_last_name': { from: 'last_name', normalise: 'name', hash: true },
    'user_data.address.sha256_street': { from: 'street', normalise: 'street', hash: true },
    'user_data.address.city': { from: 'city', normalise: 'city', hash: false },
    'user_data.address.region': { from: 'region', normalise: 'region', hash: false },
    'user_data.address.postal_code': { from: 'postal_code', normalise: 'postalCode', hash: false },
    'user_data.address.country': { from: 'country', normalise: 'country', hash: false },
  },
  meta: {
    'user_data.em': { from: 'email', normalise: 'email', hash: true, max: 5 },
    'user_data.ph': { from: 'phone', normalise: 'phone', hash: true, max: 5 },
    'user_data.fn': { from: 'first_name', normalise: 'name', hash: true },
    'user_data.ln': { from: 'last_name', normalise: 'name', hash: true },
    'user_data.ct': { from: 'city', normalise: 'city', hash: true },
    'user_data.st': { from: 'region', normalise: 'region', hash: true },
    'user_data.zp': { from: 'postal_code', normalise: 'postalCode', hash: true },
    'user_data.country': { from: 'country', normalise: 'country', hash: true },
    'user_data.external_id': { from: ['external_id', 'id'], normalise: 'externalId', hash: true },
  },
  tiktok: {
    'user.email': { from: 'email', normalise: 'email', hash: true, max: 5 },
    'user.phone': { from: 'phone', normalise: 'phone', hash: true, max: 5 },
    'user.external_id': { from: ['external_id', 'id'], normalise: 'externalId', hash: true },
    'user.first_name': { from: 'first_name', normalise: 'name', hash: true },
    'user.last_name': { from: 'last_name', normalise: 'name', hash: true },
    'user.city': { from: 'city', normalise: 'city', hash: false },
    'user.state': { from: 'region', normalise: 'region', hash: false },
    'user.zip_code': { from: 'postal_code', normalise: 'postalCode', hash: true },
    'user.country': { from: 'country', normalise: 'country', hash: false },
  },
};

/** Every user field some table reads; what crosses a thread boundary is cut down to these. */
export const IDENTIFIER_SOURCE_FIELDS: readonly UserField[] = [
  ...new Set(
    Object.values(IDENTIFIER_TABLES).flatMap((table) =>
      Object.values(table).flatMap((rule) => (typeof rule.from === 'string' ? [rule.from] : [...rule.from])),
    ),
  ),
];
