// Shared types of the identifier step: the user fields it reads, what a normaliser is told
// beyond the value, and the warnings it reports instead of throwing.
import type { NormaliseForms } from './forms.ts';

/**
 * The user fields the identifier step reads. Values are `unknown` because they come from
 * a customer payload: strings are used, finite numbers are stringified, arrays of either
 * give several values, anything else is ignored. The validated `User` fits this shape.
 */
export interface IdentifierUser {
  id?: unknown;
  external_id?: unknown;
  email?: unknown;
  phone?: unknown;
  first_name?: unknown;
  last_name?: unknown;
  street?: unknown;
  city?: unknown;
  region?: unknown;
  postal_code?: unknown;
  country?: unknown;
}
export type UserField = keyof IdentifierUser;

export type PipelineWarningCode =
  | 'IDENTIFIER_INVALID'
  | 'IDENTIFIER_HASHED_NOT_SENDABLE'
  | 'CLIENT_ID_DERIVED'
  | 'CLIENT_ID_MISSING'
  | 'COOKIE_MALFORMED'
  | 'URL_UNPARSEABLE'
  | 'CLICK_ID_CONFLICT';

/**
 * A finding that leaves the event deliverable. Same shape as the validator's `Issue`.
 * Messages never quote the value: warnings reach logs and test-mode feedback, and must
 * not carry plaintext PII.
 */
export interface PipelineWarning {
  /** The input path, e.g. `user.phone` or `cookies._fbc`. */
  field: string;
  code: PipelineWarningCode;
  message: string;
}

/** What a normaliser may need beyond the value itself. */
export interface NormaliseContext {
  /** The destination's forms (see forms.ts); unset keys take each normaliser's default. */
  forms: NormaliseForms;
  /** Account default, ISO 3166-1 alpha-2 (any case); used for national phone numbers. */
  defaultCountry?: string;
  /** The user's own country, already resolved to lowercase alpha-2. */
  country?: string;
  /**
   * Work shared by the normalisations of one batch: each value normalised (and hashed) once
   * per normal form, a phone number parsed once for every form. Never kept past the batch.
   */
  shared?: NormalMemo;
}

/** Normalised values of one batch by what they depend on; null: not usable. */
export type NormalMemo = Map<string, string | null>;
