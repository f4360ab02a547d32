// The one accept path of every intake that stores standard events (endpoints 1 and 3,
// batch intake, custom endpoints): validate each event for its account, build its row,
// commit all rows of the request in one transaction (sharing the group commit with
// concurrent requests), count them. A request's events are stored together or not at all.
import { unavailable } from '../errors.ts';
import { eventUuid } from './event-uuid.ts';
import type { Logger } from '../logger.ts';
import type { Account } from '../accounts/types.ts';
import { approvedEvents } from '../accounts/account-service.ts';
import { validateEvent } from '../schema/validate-event.ts';
import type { Issue, ValidationContext, ValidationResult } from '../schema/types.ts';
import type { EventRecord, EventStatus } from '../store/types.ts';
import type { EventWriter } from '../store/event-writer.ts';

/** The counters intake moves (a prom-client Counter fits; http/metrics.ts registers them). */
export interface IntakeCounters {
  validationFailures: { inc(labels: { code: string }): void };
  eventsStored: { inc(labels: { status: string }): void };
}

/** Validation context per account object; the authenticator hands out a new object when the account changes. */
const contexts = new WeakMap<Account, ValidationContext>();
export function validationContext(a: Account): ValidationContext {
  let c = contexts.get(a);
  if (!c) {
    c = { approvedEvents: approvedEvents(a), defaultTaxRate: a.taxRate, host: a.host, consentDefault: a.consentDefault };
    contexts.set(a, c);
  }
  return c;
}

/** Validates one event payload for `account`, counting each error by code. */
export function validateFor(account: Account, body: unknown, metrics: Pick<IntakeCounters, 'validationFailures'>): ValidationResult {
  const result = validateEvent(body, validationContext(account));
  for (const e of result.errors) metrics.validationFailures.inc({ code: e.code });
  return result;
}

export interface AcceptInput {
  account: Account;
  requestId: string;
  /** Which intake stored the row: `event`, `standard`, `batch`, `custom:<endpoint>`. */
  source: string;
  receivedAt?: number;
  log: Logger;
}

/** One event of a request: its body, and either its validation result or issues found before validation. */
export interface AcceptItem {
  body: unknown;
  /** Already validated (custom endpoints validate before deciding to store). */
  result?: ValidationResult;
  /** Refused before validation (a per-event limit of batch intake): stored as rejected, without its body. */
  refused?: Issue[];
}

export interface Accepted {
  result: ValidationResult;
  /** The stored status: a valid event may turn out a duplicate. */
  status: EventStatus;
  row: EventRecord;
}

const text = (v: unknown): string | null => (typeof v === 'string' ? v.slice(0, 128) : null);

/**
 * The event row of one validated payload: the normalised event when valid, the body as
 * received when not (or no body at all with `keepBody` false: it broke a size or shape limit).
 */
export function eventRow(input: AcceptInput, body: unknown, result: ValidationResult, receivedAt: number, keepBody = true): EventRecord {
  const ev = body !== null && typeof body === 'object' ? (body as { event?: unknown }).event : undefined;
  const named = ev !== null && typeof ev === 'object' ? (ev as Record<string, unknown>) : {};
  const accepted = result.errors.length === 0;
  return {
    id: eventUuid(receivedAt),
    scriptId: input.account.scriptId,
    name: text(named.name),
    eventId: text(named.id),
    status: accepted ? 'accepted' : 'rejected',
    source: input.source,
    requestId: input.requestId,
    receivedAt,
    errors: result.errors,
    warnings: result.warnings,
    payload: accepted ? result.event : keepBody ? body : null,
  };
}

export interface AcceptDeps {
  /** The event writer (src/intake/intake-writer.ts): commit, wake delivery, publish on the live feed. */
  writer: Pick<EventWriter, 'writeMany'>;
  metrics: IntakeCounters;
}

/**
 * Validates and stores every item in one transaction; resolves after the commit with one
 * outcome per item, in order. A store failure stores none of them and throws 503 UNAVAILABLE.
 * @example
 * const [one] = await acceptEvents(deps, { account, requestId, source: 'event', log }, [{ body }]);
 */
export async function acceptEvents(deps: AcceptDeps, input: AcceptInput, items: readonly AcceptItem[]): Promise<Accepted[]> {
  const receivedAt = input.receivedAt ?? Date.now();
  const results = items.map((it): ValidationResult => {
    if (it.refused) {
      for (const e of it.refused) deps.metrics.validationFailures.inc({ code: e.code });
      return { errors: it.refused, warnings: [] };
    }
    return it.result ?? validateFor(input.account, it.body, deps.metrics);
  });
  const rows = items.map((it, i) => eventRow(input, it.body, results[i], receivedAt, !it.refused));
  let statuses: EventStatus[];
  try {
    // The writer: src/intake/intake-writer.ts. Delivery picks an accepted event up from the
    // store, not from here. next (across the events table, on the delivery thread):
    // src/delivery/fan-out.ts fanOutOnce claims it (claimEvents).
    statuses = await deps.writer.writeMany(rows);
  } catch (err) {
    input.log.error({ err, events: rows.length }, 'event commit failed');
    throw unavailable(err);
  }
  for (const s of statuses) deps.metrics.eventsStored.inc({ status: s });
  return rows.map((row, i) => ({ result: results[i], status: statuses[i], row }));
}
