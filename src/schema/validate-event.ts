// validateEvent: the standard event payload → every error and warning, and the normalised
// event when there is no error. Schema first (compiled once, here), then the prose rules.
import { compilePayloadSchema } from './ajv.ts';
import { CART_VIEWED } from './event-requirements.ts';
import { eventPayloadSchema } from './event-schema.ts';
import { cloneJson } from './clone-json.ts';
import { isRecord } from './guards.ts';
import { applyPayloadRules } from './rules/apply-payload-rules.ts';
import { checkApproval, eventNameOf } from './rules/event-rules.ts';
import type { RuleContext } from './rules/rule-context.ts';
import { translateErrors } from './translate-errors.ts';
import type { Issue, ValidationContext, ValidationResult } from './types.ts';

const validatePayload = compilePayloadSchema(eventPayloadSchema);

/**
 * Validates a standard event payload for one account and normalises it.
 *
 * `body` must already be JSON-safe (plain objects, finite numbers, bounded depth); any shape is
 * otherwise fine. It is never modified: normalisation works on a deep copy (cloneJson, which
 * is exact for JSON and much cheaper than structuredClone at this request rate). Problems are
 * collected, not short-circuited, so a payload with three problems reports three errors.
 *
 * @example
 * const r = validateEvent(body, { approvedEvents: new Set(SPEC_EVENT_NAMES), defaultTaxRate: 19, host: null });
 * if (r.event) enqueue(r.event); else reply(400, r.errors);
 */
export function validateEvent(body: unknown, ctx: ValidationContext): ValidationResult {
  const errors: Issue[] = [];
  const warnings: Issue[] = [];
  if (!isRecord(body)) {
    errors.push({ field: '', code: 'INVALID_TYPE', message: 'The body must be a JSON object with an "event" member' });
    return { errors, warnings };
  }
  const eventName = eventNameOf(body);
  const rc: RuleContext = { eventName, cart: eventName === CART_VIEWED, account: ctx, errors, warnings };
  checkApproval(rc);
  if (!validatePayload(body)) translateErrors(validatePayload.errors ?? [], eventName, errors);
  const normalised = applyPayloadRules(cloneJson(body), rc);
  return errors.length === 0 ? { errors, warnings, event: normalised } : { errors, warnings };
}
