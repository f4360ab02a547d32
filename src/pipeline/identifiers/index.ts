// Identifier normalisation and hashing per platform (pure; no I/O).
export type { IdentifierUser, NormaliseContext, Platform, PipelineWarning, PipelineWarningCode, UserField } from './types.ts';
export { PLATFORMS } from './types.ts';
export { sha256Hex, isSha256Hex } from './sha256.ts';
export { normaliseEmail } from './email.ts';
export { normalisePhone, toE164 } from './phone.ts';
export { normaliseName } from './name.ts';
export { normaliseStreet } from './street.ts';
export { normaliseCity } from './city.ts';
export { normaliseRegion } from './region.ts';
export { normalisePostalCode } from './postal-code.ts';
export { normaliseCountry, resolveCountry } from './country.ts';
export { normaliseExternalId } from './external-id.ts';
export { NORMALISERS, type Normaliser, type NormaliserName } from './normalisers.ts';
export { IDENTIFIER_TABLES, IDENTIFIER_SOURCE_FIELDS, type IdentifierRule, type IdentifierTable } from './tables.ts';
export { hashIdentifiers, applyIdentifierTable, type HashIdentifiersOptions, type HashedIdentifiers } from './hash-identifiers.ts';
