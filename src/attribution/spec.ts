// What a destination declares about attribution: the ids it reads from cookies and
// landing-page URLs (as data the generic extractor applies), and an optional pure step
// after reading for what data cannot say (derive an id from the user, pick one of several
// cookies by a setting, drop one of two conflicting click ids).
import type { PipelineWarning } from '../identifiers/types.ts';
import type { CookieJar } from '../schema/cookie-jar.ts';

/** A value under `attribution` (rule data, OutgoingItem): an id, or ids by key. Never hashed. */
export type AttributionValue = string | Readonly<Record<string, string>>;

/** Attribution key → value. Every loaded destination's keys, e.g. `client_id`, `fbp`, `gclid`. */
export interface AttributionIds {
  [key: string]: AttributionValue | undefined;
}

/** One place an id may be read. Exactly one of `cookie` and `param`. */
export interface AttributionSource {
  /** A cookie name; its values in payload order, the first that `parse` accepts wins. */
  cookie?: string;
  /** A query parameter of `context.url`, then `context.landing_url`, kept exactly as a click id. */
  param?: string;
  /**
   * Cookie value → id, or undefined when it is malformed (a warning then names the cookie).
   * Default: the value as it is.
   */
  parse?: (value: string) => string | undefined;
  /** Parameter value → the id stored (e.g. an fbc built from fbclid and the time). */
  build?: (value: string, now: number) => string;
}

/** A finding of attribution; `sentence` is how a marketer reads it, when `message` is not. */
export interface AttributionWarning extends PipelineWarning {
  sentence?: string;
}

/** What a refine step sees and may change. */
export interface RefineContext {
  /** Every id read so far (this destination's and the others'); set or delete keys of this destination. */
  ids: AttributionIds;
  cookies: CookieJar;
  /** The event's user, to derive ids from. */
  user: { id?: unknown; email?: unknown; phone?: unknown } | null | undefined;
  /** ms since epoch: the event's received time when mapping (never the clock: mapped again, the ids must not change). */
  now: number;
  /** Keys derived ids (the account id), so they differ between accounts. */
  salt: string;
  /** The settings of the destination the event is being mapped for (secrets included; never echo them). */
  settings: Readonly<Record<string, unknown>>;
  warn(w: AttributionWarning): void;
}

export interface AttributionSpec {
  /** Key → where it is read, tried in order; the first source with a usable value wins. */
  ids: Readonly<Record<string, readonly AttributionSource[]>>;
  /** Runs after every destination's ids are read. Pure; never throws. */
  refine?(ctx: RefineContext): void;
}

/** A spec with the name of the destination that declared it. */
export interface NamedAttributionSpec {
  name: string;
  spec: AttributionSpec;
}
