// The destination plugin contract. A plugin is a folder under PLUGINS_DIR whose
// index.ts default-exports a DestinationPlugin; its name is the folder's name.
// Definitions are data plus two pure functions: build the requests, classify the reply.
// Everything platform-specific lives in the plugin: which identifiers in which normal form,
// which cookies and click ids, marketer warnings, consent gating. The core applies it.
import type { IdentifierSpec } from '../identifiers/index.ts';
import type { AttributionIds, AttributionSpec } from '../attribution/index.ts';
import type { NormalizedEvent } from '../schema/types.ts';
import type { OutgoingItem } from '../domain/records.ts';
import type { OAuthSpec } from './oauth-settings.ts';

export type { OutgoingItem };

/** What kind of destination it is, for listings: `analytics`, `advertising`, `webhook`, … (lowercase word). */
export type DestinationCategory = string;

/** The consent flag that gates a destination by default; null: not gated. */
export type ConsentGate = 'analytics' | 'marketing' | 'personalization' | null;

// `any` by default so a registry can hold plugins with different settings types.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface DestinationPlugin<S = any> {
  /** Equal to the folder name, e.g. `ga4`. */
  name: string;
  /** Semver of the definition. */
  version: string;
  category: DestinationCategory;
  /**
   * Which consent flag must be true for an event to be sent (`consent_category` in the
   * settings overrides it); null: sent regardless of consent (e.g. the customer's own webhook).
   */
  consent: ConsentGate;
  description: string;
  /**
   * JSON Schema (ajv, draft-07) of the settings an operator gives with
   * `destinations add --config`. Must allow the common optional keys: `endpoint`
   * (base URL override), `test_event_code`, `events` (allow-list), `consent_category`.
   */
  settingsSchema: Record<string, unknown>;
  /** Settings keys that are secrets: masked in listings and previews, never logged. */
  secretSettings: readonly string[];
  /** Request headers whose values are derived from a secret (e.g. a signature): masked whole in previews. */
  secretHeaders?: readonly string[];
  /**
   * The platform takes OAuth 2.0 bearer tokens from this token endpoint. Its settings then
   * accept `client_id`, `client_secret`, `refresh_token` and `token_url`
   * (OAUTH_SETTINGS_PROPERTIES; OAUTH_SECRET_SETTINGS among `secretSettings`) instead of
   * `access_token`, and for such a config the core sets `Authorization: Bearer <token>` on
   * every request when it is sent, from its shared token cache (src/delivery/oauth/). So
   * buildRequests writes the header only from `access_token`. Absent: no OAuth.
   */
  oauth?: OAuthSpec;
  /**
   * Which identifiers it wants, as data the core applies: `table` maps each native field
   * (dot path) to the user field it reads, the generic normaliser (email, phone, name,
   * street, city, region, postalCode, country, externalId) and whether it is hashed;
   * `forms` picks each normaliser's normal form for this destination (see
   * src/identifiers/forms.ts). The results reach buildRequests as item.identifiers.
   * Null: the plugin sends no identifiers.
   */
  identifiers: IdentifierSpec | null;
  /**
   * Whether the operator opted this destination in to identifiers in plain text (e.g. a
   * setting of its own); given its settings without secrets. Only then do its rules read
   * `user` as sent, and never for an event whose marketing consent is refused. Absent:
   * never; its rules read every identifier field SHA-256-hashed (see hashUserFields).
   */
  plaintextIdentifiers?(settings: Readonly<Record<string, unknown>>): boolean;
  /**
   * Which attribution ids it reads (cookies, landing-page click ids) and an optional pure
   * refine step (see src/attribution/spec.ts). The core reads every loaded plugin's
   * ids for every event, so rules see them all under `attribution`; warnings about a cookie
   * reach only the plugins that read it. Absent: it reads none.
   */
  attribution?: AttributionSpec;
  /**
   * Attribution keys that, like a hashed e-mail or phone in its identifiers, let the
   * platform match a person. When an event carries none of them, previews warn
   * ("no match keys"). Absent: no such warning.
   */
  matchKeys?: readonly string[];
  /**
   * JSON Schema of one native event as its rules must produce it (the rule output with its
   * dot paths expanded), draft-07 unless `$schema` names 2020-12. Each rule's output is
   * checked before building: one that fails is refused (`build_failed`, naming the rule and
   * the JSON path) and nothing is sent. Absent: not checked.
   */
  nativeSchema?: Record<string, unknown>;
  /**
   * Optional: why the platform can never match this native event (it carries no identifier
   * the platform accepts), or null when it can. An event whose every native event is
   * unmatchable is recorded `skipped` (`unmatchable`, with this reason) before it joins a
   * batch, and never sent: one such event could otherwise sink the request it rides in. Pure.
   */
  unmatchable?(item: OutgoingItem, settings: S): string | null;
  /**
   * Set when the platform has no test mode: why, in a sentence. `test_event_code` is then
   * refused when the destination is saved (CLI exit 2, admin API 400), and a config stored
   * with a non-empty one before that refusal existed is never delivered (each event
   * `skipped`, `no_test_mode`): an event meant as a test must not become a production
   * conversion. Absent: buildRequests honours `test_event_code` (non-empty: test mode) so
   * that no production conversion is recorded with it — the platform's test field or path.
   */
  noTestMode?: string;
  /**
   * Optional: the requests that ask the platform to check these events and record nothing —
   * its validation path (GA4's /debug/mp/collect, Google Ads' validateOnly, Snapchat's
   * /events/validate, the destination's own test code) — for endpoint 2's
   * `?validate=platform`; or why there is none for this config (`unavailable`, a sentence).
   * Given what buildRequests gets, with the real settings: one request per request
   * buildRequests makes, in the same order. The platform's reply is read by classifyResponse
   * (success: valid; permanent: invalid, with its message). Sent by the core within a
   * 3 s budget, through the delivery's sender (address checks, User-Agent) and, for OAuth
   * settings, with a token from the shared cache. Pure. Absent: not available.
   */
  validationRequests?(input: BuildInput<S>): OutboundRequest[] | { unavailable: string };
  /** Most native events one request may carry. */
  batch: { maxEvents: number };
  /**
   * Builds the HTTP request(s) for one or more native events of the same destination
   * (at most batch.maxEvents). Pure: no I/O, no clock except input.now, and the items
   * are read-only (their native fields share the normalised event's objects; build new
   * objects around them, never write into them).
   */
  buildRequests(input: BuildInput<S>): OutboundRequest[];
  /** Classifies the platform's reply. Never throws. */
  classifyResponse(res: PlatformResponse): Classification;
  /**
   * Optional: what the platform accepts but may not use (a missing field it recommends),
   * said in sentences without event data. Shown in previews and test mode. Pure.
   */
  warnings?(input: BuildInput<S>): string[];
}


export interface BuildInput<S> {
  settings: S;
  items: OutgoingItem[];
  /** ms since epoch; signing timestamps and similar use this, never Date.now(). */
  now: number;
}

export interface OutboundRequest {
  method: 'POST';
  url: string;
  headers: Record<string, string>;
  /** The exact bytes to send (JSON text). */
  body: string;
  /** The eventIds this request carries. */
  eventIds: string[];
}

export interface PlatformResponse {
  status: number;
  headers: Record<string, string>;
  /** Response body text, possibly truncated. */
  body: string;
}

/** One event's own verdict inside a reply that carries several. */
export type EventClassification =
  | { outcome: 'success'; message?: string }
  | { outcome: 'retryable'; message: string; retryAfterMs?: number }
  | { outcome: 'permanent'; message: string };

/**
 * The reply's verdict. One request may carry many events; a reply that says which of them
 * failed, retry or succeeded names them in `events` (by index in the request's `eventIds`),
 * and each delivery is settled by its own verdict. The outcome above applies to the events
 * it does not name, unless `others` says they were never processed:
 * - `resend`: the request was refused whole because of the events it names; the others are
 *   sent again at once, in a request without the named ones (LinkedIn's 422 `Index: N`);
 * - `split`: refused whole, naming no event: the request is split in halves and each half
 *   sent again, down to single events, before any event takes the outcome (Reddit's "None
 *   were processed"). A single event refused this way takes the outcome.
 */
export type Classification = EventClassification & {
  events?: readonly ({ index: number } & EventClassification)[];
  others?: 'resend' | 'split';
};
