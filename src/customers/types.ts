// The custom-endpoint plugin contract: what a solution engineer writes in
// customers/<slug>/endpoints/<name>/handler.ts, and what the loader hands the route.
import type { Logger } from '../logger.ts';
import type { EndpointConfig } from './endpoint-config.ts';
import type { EndpointAuth } from './auth/endpoint-auth.ts';
import type { BodyValidator } from './body-validator.ts';
import type { VersionPlan } from './endpoint-versions.ts';

/** `env` query parameter: `test` runs everything but stores and delivers nothing. */
export type CustomEnv = 'production' | 'test';
export const CUSTOM_ENVS: readonly CustomEnv[] = ['production', 'test'];

/**
 * A standard event payload as the payload reference defines it (the body of endpoint 1), before
 * validation. The route validates every produced payload with `validateEvent`, exactly as
 * endpoint 1 does, so a handler needs to get the shape right, not every rule.
 */
export interface StandardEventPayload {
  event: {
    name: string;
    id?: string;
    value?: number;
    currency?: string;
    exchange_rate?: number;
    properties?: Record<string, unknown>;
    [extra: string]: unknown;
  };
  context?: {
    environment?: 'prod' | 'dev';
    data_source?: string;
    user_agent?: string;
    overide_ip?: string;
    url?: string;
    [extra: string]: unknown;
  };
  products?: Record<string, unknown>[];
  shipping?: Record<string, unknown>[];
  payments?: Record<string, unknown>[];
  coupons?: Record<string, unknown>[];
  user?: Record<string, unknown>;
  consent?: { analytics: boolean; personalization: boolean; marketing: boolean };
  cookies?: { name: string; value: string }[];
  [extra: string]: unknown;
}

/**
 * A customer-specific record that is not a standard event (a stock movement, an
 * analytics row). Stored durably in `custom_records`; with a `key`, a later record of the
 * same endpoint, type and key replaces the earlier one, so a retried request is harmless.
 */
export interface CustomRecord {
  /** Short kind name, `[a-z][a-z0-9_]*`, e.g. `stock_movement`. */
  type: string;
  /** Idempotency key within (account, endpoint, type), e.g. the shipment id. */
  key?: string;
  data: Record<string, unknown>;
}

/** What a handler gets besides the validated body. Plain data plus a logger: no store, no network. */
export interface HandlerContext {
  account: { scriptId: string; name: string; country: string | null; host: string | null };
  env: CustomEnv;
  /** Milliseconds since the epoch when the request arrived; use it instead of Date.now(). */
  now: number;
  requestId: string;
  /** `version`: the endpoint version this request was served by. */
  endpoint: { customer: string; name: string; version: number };
  /** `settings` of endpoint.json, as written there. */
  settings: Readonly<Record<string, unknown>>;
  /** Structured logger bound to the request; never log identifiers or free text. */
  logger: Logger;
}

export interface HandlerResult {
  /** Zero or more standard event payloads; each goes through validation, storage and delivery like endpoint 1. */
  events: StandardEventPayload[];
  /** Records that are not standard events; stored in production, shown in test. */
  records?: CustomRecord[];
  /** Human-readable outcome lines returned to the caller, e.g. one per order. */
  messages: string[];
  /** How many items of the request the handler processed (orders, shipments, …). */
  recordsProcessed: number;
}

/**
 * The default export of handler.ts. Pure apart from logging: same body and context, same result.
 * Throw `customValidationError(field, expected, message)` for a rule the schema cannot express.
 *
 * @example
 * const handler: CustomHandler<{ order_id: string }> = (body, ctx) => ({
 *   events: [{ event: { name: 'order_canceled', id: body.order_id }, context: { environment: 'prod' } }],
 *   messages: [`order ${body.order_id}: canceled`],
 *   recordsProcessed: 1,
 * });
 * export default handler;
 */
export type CustomHandler<TBody = Record<string, unknown>> = (
  body: TBody,
  ctx: HandlerContext,
) => HandlerResult | Promise<HandlerResult>;

/** One version of an endpoint as loaded: its own schema and example; its handler.ts is loaded only in the handler threads. */
export interface EndpointVersion extends VersionPlan {
  /** The request body schema as written (for docs and `customers list`). */
  schema: Record<string, unknown>;
  /** example.json as read and checked at load (the admin API's test run sends it). */
  example: unknown;
  validateBody: BodyValidator;
  /** Names, sizes and times of the version's files when loaded: unchanged files are not loaded again. */
  fingerprint: string;
  /** Set when the handler was loaded afresh after a change; the worker threads load it the same way. */
  fresh?: string;
}

/** One endpoint as loaded and checked at start. */
export interface LoadedEndpoint {
  customer: string;
  name: string;
  folder: string;
  config: EndpointConfig;
  /** The current version's schema, example and validator (as `versions.get(current)`). */
  schema: Record<string, unknown>;
  example: unknown;
  validateBody: BodyValidator;
  /** The version a request gets when it names none and its account has no pin. */
  current: number;
  /** Every version served, ascending; a retired one is gone from the folder and from here. */
  versions: ReadonlyMap<number, EndpointVersion>;
  auth: EndpointAuth;
  /** Things an operator should fix that do not stop loading (logged at start). */
  warnings: string[];
}

/** customer slug → endpoint name → endpoint. */
export type CustomerRegistry = ReadonlyMap<string, ReadonlyMap<string, LoadedEndpoint>>;
