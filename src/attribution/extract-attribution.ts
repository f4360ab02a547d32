// The generic attribution extractor: reads the ids every loaded destination declares
// (cookies, landing-page parameters), then runs each one's refine step. Malformed input
// never throws: the id is left out and a warning names the cookie or URL, tagged with the
// destination whose spec read it, so each destination hears only its own.
import { cleanClickId, queryParams } from './click-ids.ts';
import { cookieJar, type CookieInput } from '../schema/cookie-jar.ts';
import type { AttributionIds, AttributionWarning, NamedAttributionSpec, RefineContext } from './spec.ts';

export interface AttributionInput {
  /** The payload's `cookies` array (`[{name, value}]`) or a name → value map. */
  cookies?: CookieInput;
  /** `context.url`, searched first for click ids. */
  url?: string;
  /** `context.landing_url`, searched after `url`. */
  landingUrl?: string;
  /** For refine steps that derive an id from the user. */
  user?: { id?: unknown; email?: unknown; phone?: unknown } | null;
  /**
   * Milliseconds since epoch: the time the ids are read as at, e.g. the first-seen time of an
   * fbc built from `fbclid`. The pipeline passes the event's received time, never the clock,
   * so an event mapped again (a trace, a replay) gives the same ids and the same bytes.
   */
  now: number;
  /** Settings of the destination being mapped (a refine step may read one, e.g. GA4's measurement_id). */
  settings?: Readonly<Record<string, unknown>>;
  /** Keys derived ids; pass the account id so ids differ between accounts. Default `tracklane`. */
  salt?: string;
  /** The specs to apply, in order (every loaded destination's, so rule data sees every id). */
  specs: readonly NamedAttributionSpec[];
}

/** A warning with the destination whose spec produced it; none for URL problems (every reader of parameters). */
export interface TaggedAttributionWarning extends AttributionWarning {
  destination?: string;
}

export interface AttributionResult {
  ids: AttributionIds;
  warnings: TaggedAttributionWarning[];
}

/**
 * @example
 * extractAttribution({ cookies: [{ name: '_fbp', value: 'fb.1.1700000000000.42' }],
 *                      url: 'https://shop.example/?gclid=Cj0KCQiA', now, specs })
 * // → { ids: { fbp: 'fb.1.1700000000000.42', gclid: 'Cj0KCQiA', … }, warnings: [] }
 */
export function extractAttribution(input: AttributionInput): AttributionResult {
  return refine(readAttribution(input), input, false);
}

/** The part of extraction that does not depend on the destination being mapped: one per event. */
export interface AttributionReading {
  /** Ids read from cookies and URL parameters, before any refine step. */
  ids: AttributionIds;
  warnings: TaggedAttributionWarning[];
  jar: ReturnType<typeof cookieJar>;
  /** The last refinement of this reading, for the next destination whose settings agree where it read them. */
  refined: Refinement | undefined;
}

/** A refinement, what it was given and the settings it read (null: it looked at them otherwise, so it is not reused). */
interface Refinement {
  input: AttributionInput;
  settings: Readonly<Record<string, unknown>>;
  read: (string | symbol)[] | null;
  result: AttributionResult;
}

/**
 * Reads every spec's cookies and URL parameters. The same for every destination of an event
 * (settings play no part), so an event mapped for several destinations is read once and
 * refined per destination (refineAttribution).
 */
export function readAttribution(input: Omit<AttributionInput, 'settings'>): AttributionReading {
  const warnings: TaggedAttributionWarning[] = [];
  const jar = cookieJar(input.cookies);
  const params: URLSearchParams[] = [];
  readParams(params, 'context.url', input.url, warnings);
  readParams(params, 'context.landing_url', input.landingUrl, warnings);
  // Indexed loops and module-level helpers, no closures: this runs for every event delivered
  // (for…of here left an iterator result per step in allocation profiles).
  const ids: AttributionIds = {};
  for (let d = 0; d < input.specs.length; d++) {
    const { name: destination, spec } = input.specs[d];
    for (const key in spec.ids) {
      if (!Object.hasOwn(spec.ids, key) || ids[key] !== undefined) continue;
      const sources = spec.ids[key];
      for (let i = 0; i < sources.length; i++) {
        const s = sources[i];
        let value: string | undefined;
        if (s.cookie !== undefined) value = cookieValue(jar, s.cookie, s.parse, destination, warnings);
        else if (s.param !== undefined) {
          const raw = paramValue(params, s.param);
          value = raw !== undefined && s.build ? s.build(raw, input.now) : raw;
        }
        if (value !== undefined) {
          ids[key] = value;
          break;
        }
      }
    }
  }
  return { ids, warnings, jar, refined: undefined };
}

/** A URL's query parameters added to `params`, or a warning when it is not an absolute URL. */
function readParams(params: URLSearchParams[], field: 'context.url' | 'context.landing_url', url: string | undefined, warnings: TaggedAttributionWarning[]): void {
  if (typeof url !== 'string' || url.trim() === '') return;
  const p = queryParams(url.trim());
  if (p !== null) params.push(p);
  else warnings.push({ field, code: 'URL_UNPARSEABLE', message: `${field} is not an absolute URL; no click ids read from it` });
}

/** The first value of cookie `name` that `parse` accepts (any value without one); a warning when values exist but none parses. */
function cookieValue(
  jar: AttributionReading['jar'], name: string, parse: ((v: string) => string | undefined) | undefined, destination: string,
  warnings: TaggedAttributionWarning[],
): string | undefined {
  const values = jar.all(name);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    const found = parse === undefined ? v : parse(v);
    if (found !== undefined) return found;
  }
  if (values.length > 0) {
    warnings.push({ destination, field: `cookies.${name}`, code: 'COOKIE_MALFORMED', message: `cookie ${name} does not have the expected format; ignored` });
  }
  return undefined;
}

/** The first usable click id named `name` in the URLs, in order. */
function paramValue(params: readonly URLSearchParams[], name: string): string | undefined {
  for (let i = 0; i < params.length; i++) {
    const v = cleanClickId(params[i].get(name));
    if (v !== undefined) return v;
  }
  return undefined;
}

/**
 * A reading finished for one destination: each spec's refine step with that destination's
 * settings. Refine steps are pure and most read no setting, so the destinations of one event
 * share a refinement when the settings it read (recorded as it ran) hold the same values for
 * them; its result is then the same object (ids and warnings are only read).
 */
export function refineAttribution(reading: AttributionReading, input: AttributionInput): AttributionResult {
  return refine(reading, input, true);
}

function refine(reading: AttributionReading, input: AttributionInput, remember: boolean): AttributionResult {
  const settings = input.settings ?? NO_SETTINGS;
  const last = reading.refined;
  if (last !== undefined && reusable(last, input, settings)) return last.result;
  const recorder = remember ? new SettingsReads() : null;
  const ctx = new Refining(reading, input, recorder === null ? settings : new Proxy(settings, recorder));
  for (const named of input.specs) {
    if (named.spec.refine === undefined) continue;
    ctx.destination = named.name;
    ctx.ids = ctx.own; // a step that replaced the object must not hide the ids from the next one
    named.spec.refine(ctx);
  }
  const result = { ids: withoutUndefined(ctx.own), warnings: ctx.warnings };
  if (recorder !== null) reading.refined = { input, settings, read: recorder.keys, result };
  return result;
}

/** Whether `last` is what refining with `input` would give: the same event inputs and the same values where its steps read the settings. */
function reusable(last: Refinement, input: AttributionInput, settings: Readonly<Record<string, unknown>>): boolean {
  if (last.read === null) return false;
  const before = last.input;
  if (before.specs !== input.specs || before.user !== input.user || before.now !== input.now || before.salt !== input.salt) return false;
  for (const key of last.read) {
    if (!Object.is((last.settings as Record<string | symbol, unknown>)[key], (settings as Record<string | symbol, unknown>)[key])) return false;
  }
  return true;
}

/** Proxy handler recording which settings the refine steps read; any other look (keys, `in`) makes the refinement not reusable. */
class SettingsReads implements ProxyHandler<Readonly<Record<string, unknown>>> {
  keys: (string | symbol)[] | null = [];

  get(target: Readonly<Record<string, unknown>>, key: string | symbol): unknown {
    if (this.keys !== null && !this.keys.includes(key)) this.keys.push(key);
    return Reflect.get(target, key);
  }

  has(target: Readonly<Record<string, unknown>>, key: string | symbol): boolean {
    this.keys = null;
    return Reflect.has(target, key);
  }

  ownKeys(target: Readonly<Record<string, unknown>>): (string | symbol)[] {
    this.keys = null;
    return Reflect.ownKeys(target);
  }

  getOwnPropertyDescriptor(target: Readonly<Record<string, unknown>>, key: string | symbol): PropertyDescriptor | undefined {
    this.keys = null;
    return Reflect.getOwnPropertyDescriptor(target, key);
  }
}

/**
 * One context for every refine step of a destination (they run one after another), a class
 * so that no closure is made per destination and event; `warn` tags a warning with the
 * destination whose step is running. The reading's warnings are copied on the first new one.
 */
class Refining implements RefineContext {
  readonly own: AttributionIds;
  ids: AttributionIds;
  readonly cookies: AttributionReading['jar'];
  readonly user: AttributionInput['user'];
  readonly now: number;
  readonly salt: string;
  readonly settings: Readonly<Record<string, unknown>>;
  destination = '';
  warnings: TaggedAttributionWarning[];
  private copied = false;

  constructor(reading: AttributionReading, input: AttributionInput, settings: Readonly<Record<string, unknown>>) {
    this.own = { ...reading.ids };
    this.ids = this.own;
    this.cookies = reading.jar;
    this.user = input.user;
    this.now = input.now;
    this.salt = input.salt ?? 'tracklane';
    this.settings = settings;
    this.warnings = reading.warnings;
  }

  warn(w: AttributionWarning): void {
    if (!this.copied) {
      this.warnings = [...this.warnings];
      this.copied = true;
    }
    this.warnings.push({ destination: this.destination, ...w });
  }
}

const NO_SETTINGS: Readonly<Record<string, unknown>> = Object.freeze({});

/** Whether a destination's spec reads any URL parameter (URL warnings concern it then). */
export function readsParams(spec: { ids: NamedAttributionSpec['spec']['ids'] } | undefined): boolean {
  return spec !== undefined && Object.values(spec.ids).some((sources) => sources.some((s) => s.param !== undefined));
}

/** `o` itself, or a copy without its undefined members when it has any (refine steps may unset an id that way). */
function withoutUndefined(o: AttributionIds): AttributionIds {
  for (const k in o) {
    if (o[k] !== undefined) continue;
    const out: AttributionIds = {};
    for (const key in o) if (Object.hasOwn(o, key) && o[key] !== undefined) out[key] = o[key];
    return out;
  }
  return o;
}
