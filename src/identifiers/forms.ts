// The normal forms a destination may ask each generic normaliser for. Plugins declare them
// as plain data (`identifiers.forms`); the normalisers read them, so no code here names a
// destination. Every key is optional: an unset key takes the default written beside it.

/** E-mail: always NFC, trimmed, lower-cased and shape-checked. */
export interface EmailForm {
  /** Remove every space inside the address too. Default false. */
  removeSpaces?: boolean;
  /** Drop the dots of a gmail.com / googlemail.com local part (the `+tag` stays). Default false. */
  dropGmailDots?: boolean;
}

/** Phone: parsed to E.164; `e164` keeps the `+` (default), `digits` drops it. */
export type PhoneForm = 'e164' | 'digits';

/**
 * First and last names, lower-cased NFC in every form.
 * - `trim` (default): nothing more
 * - `letters`: digits and symbols removed, spaces collapsed
 * - `no-punctuation`: punctuation and symbols removed, spaces collapsed
 */
export type NameForm = 'trim' | 'letters' | 'no-punctuation';

/** City: `alphanumeric` (default) keeps letters and digits only; `letters` keeps letters and inner spaces. */
export type CityForm = 'alphanumeric' | 'letters';

/**
 * Region or state.
 * - `trim` (default): lower-cased, trimmed
 * - `letters`: digits and symbols removed
 * - `us-state-code`: for the US (the user's country, or none known) a state name becomes its
 *   two-letter code; otherwise letters and digits only
 */
export type RegionForm = 'trim' | 'letters' | 'us-state-code';

/**
 * Postal code.
 * - `no-spaces` (default): lower-cased, spaces removed
 * - `no-dots`: `.` and `~` removed, case and inner spaces kept
 * - `us-zip5`: US (the user's country, or a ZIP+4 shape when none is known) → first five
 *   digits; otherwise lower-cased without spaces or dashes
 */
export type PostalCodeForm = 'no-spaces' | 'no-dots' | 'us-zip5';

/** Country as ISO 3166-1 alpha-2: `lower` (default) or `upper` case. */
export type CountryForm = 'lower' | 'upper';

/** External (customer) id: trimmed. */
export interface ExternalIdForm {
  /** Lower-case it (default false: ids are often case-sensitive). */
  lowerCase?: boolean;
  /** Refuse an id holding an `@` (where it is sent in plain text and must carry no PII). Default false. */
  refuseEmail?: boolean;
}

/** One destination's choice of form per normaliser. */
export interface NormaliseForms {
  email?: EmailForm;
  phone?: PhoneForm;
  name?: NameForm;
  city?: CityForm;
  region?: RegionForm;
  postalCode?: PostalCodeForm;
  country?: CountryForm;
  externalId?: ExternalIdForm;
}
