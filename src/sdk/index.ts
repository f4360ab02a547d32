// `tracklane/sdk`: what a destination plugin or a custom endpoint handler may rely on, and
// nothing else. Plugins (plugins/*, PLUGINS_DIR) and handlers (customers/**, CUSTOMERS_DIR)
// import only this entry (and `tracklane/sdk/testing` in their tests), never a file under
// src/: a refactor of the core keeps these names and types, and changes no extension.
// docs/sdk.md documents each export; test/sdk/sdk-surface.test.ts pins the list.

// ---- destination plugins: the contract -------------------------------------------------
export type {
  DestinationPlugin, DestinationCategory, ConsentGate, BuildInput, OutboundRequest, PlatformResponse,
  Classification, EventClassification, OutgoingItem,
} from '../destinations/types.ts';
export type { NativeEvent } from '../domain/rule-documents.ts';
export type { OAuthSpec } from '../destinations/oauth-settings.ts';

// ---- settings schemas ------------------------------------------------------------------
export { COMMON_SETTINGS_PROPERTIES, baseUrl, type CommonSettings, type SettingsOf, type ValueOf } from '../destinations/settings-schema.ts';
export { ACCESS_TOKEN_OR_OAUTH, OAUTH_SETTINGS_PROPERTIES, OAUTH_SECRET_SETTINGS } from '../destinations/oauth-settings.ts';

// ---- building requests -----------------------------------------------------------------
export { chunk } from '../destinations/chunk.ts';
export { expandBranch, expandDotPaths, mergeDotPaths, isPlainObject } from '../destinations/dot-path.ts';
export { withKeyOrder } from '../destinations/key-order.ts';
export { addClientFields } from '../destinations/client-fields.ts';

// ---- classifying replies: HTTP status and Retry-After ----------------------------------
export { classifyHttpStatus, isRedirectStatus, isRetryableStatus, isSuccessStatus, type HttpStatusOptions } from '../destinations/http-status.ts';
export { retryable, retryAfterMs, type RetryAfterOptions } from '../destinations/retry-after.ts';

// ---- identifiers: normal forms and hashing ---------------------------------------------
export {
  sha256Hex, isSha256Hex, normaliseEmail, normalisePhone, toE164, normaliseName, normaliseStreet, normaliseCity,
  normaliseRegion, normalisePostalCode, normaliseCountry, normaliseExternalId, hashedContactTable,
  type IdentifierSpec, type IdentifierRule, type IdentifierTable, type NormaliseForms, type UserField,
} from '../identifiers/index.ts';

// ---- attribution: click ids and cookies ------------------------------------------------
export { cleanClickId, queryParams, type AttributionSpec, type AttributionSource, type AttributionIds, type AttributionValue, type RefineContext } from '../attribution/index.ts';

// ---- the validated event ---------------------------------------------------------------
export type { NormalizedEvent, EventContext, User, Product, Shipping, Payment, Coupon, Consent, Cookie } from '../schema/types.ts';
export { SPEC_EVENT_NAMES } from '../domain/accounts.ts';
export { NativeSchemaError } from '../destinations/native-schema.ts';
export type { MapResult, SkipReason } from '../pipeline/map-event.ts';

// ---- custom endpoint handlers ----------------------------------------------------------
export type { CustomHandler, HandlerContext, HandlerResult, StandardEventPayload, CustomRecord, CustomEnv } from '../customers/types.ts';
export { customValidationError, isCustomValidationError, type CustomValidationError } from '../customers/custom-validation-error.ts';
