// GA4 reply classification: the collect endpoint answers 2xx for any payload, so only
// transport-level statuses matter there. The validation server (/debug/mp/collect, test
// mode) answers 200 with `validationMessages`: none means valid; each one is GA4 calling
// the request invalid, and an event it calls invalid fails (permanent) with GA4's own
// code, field path and description as its reason.
import { type Classification, classifyHttpStatus, type EventClassification, isSuccessStatus, type PlatformResponse, retryAfterMs } from 'tracklane/sdk';

interface ValidationMessage { fieldPath?: unknown; validationCode?: unknown; description?: unknown }

/** Messages quoted in one reason, at most. */
const MAX_MESSAGES = 5;

export function classifyResponse(res: PlatformResponse): Classification {
  if (isSuccessStatus(res.status)) return classifyValidation(validationMessages(res.body));
  return classifyHttpStatus(res.status, `GA4 answered HTTP ${res.status}`, {
    redirectNote: ' (redirects are not followed; check the endpoint)',
    retryAfterMs: retryAfterMs(res.headers, { fractions: true }),
  });
}

/**
 * No messages: success. When every message names its event (GA4's description says
 * "Event at index: [N]"), those events fail with their own messages and the others passed;
 * a message about the request itself (client_id, user_data, …) fails every event of it.
 */
function classifyValidation(messages: ValidationMessage[]): Classification {
  if (messages.length === 0) return { outcome: 'success' };
  const byIndex = new Map<number, ValidationMessage[]>();
  for (const m of messages) {
    const index = eventIndex(m);
    if (index !== null) byIndex.set(index, [...(byIndex.get(index) ?? []), m]);
  }
  if (byIndex.size === 0 || [...byIndex.values()].flat().length < messages.length) return invalid(messages);
  const events = [...byIndex].map(([index, own]) => ({ index, ...invalid(own) }));
  return { outcome: 'success', message: `GA4 validation: ${events.length} event${events.length === 1 ? '' : 's'} invalid`, events };
}

function invalid(messages: ValidationMessage[]): EventClassification {
  const list = messages.slice(0, MAX_MESSAGES).map(describe);
  const more = messages.length > MAX_MESSAGES ? `; and ${messages.length - MAX_MESSAGES} more` : '';
  return { outcome: 'permanent', message: `GA4 validation failed: ${list.join('; ')}${more}` };
}

/** `NAME_INVALID at events: Event at index: [0] has invalid name [_bad]. …` */
function describe(m: ValidationMessage): string {
  const text = typeof m.description === 'string' && m.description !== '' ? `: ${m.description.slice(0, 300)}` : '';
  return `${String(m.validationCode ?? 'INVALID')} at ${String(m.fieldPath ?? '?')}${text}`;
}

function eventIndex(m: ValidationMessage): number | null {
  const found = typeof m.description === 'string' ? /\bEvent at index: \[(\d+)\]/.exec(m.description) : null;
  return found === null ? null : Number(found[1]);
}

function validationMessages(body: string): ValidationMessage[] {
  if (!body.trimStart().startsWith('{')) return [];
  try {
    const parsed = JSON.parse(body) as { validationMessages?: unknown };
    return Array.isArray(parsed.validationMessages)
      ? parsed.validationMessages.filter((m): m is ValidationMessage => m !== null && typeof m === 'object')
      : [];
  } catch {
    return [];
  }
}
