// Identifier normalisation and hashing, driven by each destination's spec (pure; no I/O).
export type { IdentifierUser, NormaliseContext, PipelineWarning, PipelineWarningCode, UserField } from './types.ts';
export type { NormaliseForms, EmailForm, PhoneForm, NameForm, CityForm, RegionForm, PostalCodeForm, CountryForm, ExternalIdForm } from './forms.ts';
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
export { checkIdentifierSpec, hashedContactTable, sourceFields, type IdentifierRule, type IdentifierSpec, type IdentifierTable } from './spec.ts';
export { createNormalMemo, hashIdentifiers, type HashIdentifiersOptions, type HashedIdentifiers, type NormalMemo } from './hash-identifiers.ts';
export { hashUserFields, type HashUserOptions } from './hash-user.ts';
