// The `event` member: approval for the account, and its defaults (exchange_rate 1).
import { dropNulls, isRecord, upperCaseCurrency } from '../guards.ts';
import type { NormalizedEvent } from '../types.ts';
import { fail, type RuleContext } from './rule-context.ts';

const EVENT_MEMBERS = ['value', 'currency', 'exchange_rate', 'id', 'properties'] as const;

/** event.name when it is a non-empty string, else undefined (the schema reports why). */
export function eventNameOf(body: Record<string, unknown>): string | undefined {
  const event = body.event;
  if (!isRecord(event)) return undefined;
  const name = event.name;
  return typeof name === 'string' && name.length > 0 ? name : undefined;
}

/** EVENT_NOT_APPROVED when the account may not send this event name. */
export function checkApproval(rc: RuleContext): void {
  const name = rc.eventName;
  if (name === undefined || rc.account.approvedEvents.has(name)) return;
  fail(rc, 'event.name', 'EVENT_NOT_APPROVED',
    `event.name "${name.length > 60 ? `${name.slice(0, 60)}…` : name}" is not approved for this account; ` +
    'use one of the standard event names or ask the operator to approve it');
}

/** Nulls dropped, currency upper-cased, exchange_rate defaulted to 1. */
export function normaliseEventMember(raw: unknown): NormalizedEvent['event'] {
  if (!isRecord(raw)) return { name: '', exchange_rate: 1 };
  dropNulls(raw, EVENT_MEMBERS);
  upperCaseCurrency(raw);
  if (raw.exchange_rate === undefined) raw.exchange_rate = 1;
  return raw as unknown as NormalizedEvent['event'];
}
