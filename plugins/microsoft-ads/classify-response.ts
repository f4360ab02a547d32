// Microsoft's reply → success / retryable / permanent. 200 is success for the events it took:
// with continueOnValidationError, events it skipped are named by index in error.details (not
// warnings) and each fails with its own reason; fields it dropped are noted in the message; 400 (no event valid) and 401 (token or tag wrong) are final; 408, 429
// and 5xx are retried, honouring Retry-After.
import { classifyHttpStatus, isSuccessStatus, retryAfterMs, type Classification, type PlatformResponse } from 'tracklane/sdk';

interface Detail { index?: unknown; propertyName?: unknown; errorMessage?: unknown; isWarning?: unknown }

export function classifyResponse(res: PlatformResponse): Classification {
  const body = parse(res.body);
  const error = isRecord(body?.error) ? body.error : undefined;
  const details: Detail[] = Array.isArray(error?.details) ? error.details.filter(isRecord) : [];
  if (isSuccessStatus(res.status)) {
    const received = typeof body?.eventsReceived === 'number' ? `events received ${body.eventsReceived}` : 'accepted';
    const skipped = details.filter((d) => d.isWarning !== true);
    const dropped = details.filter((d) => d.isWarning === true);
    const notes = [
      skipped.length > 0 ? `${countOf(skipped, 'event')} skipped${reason(skipped[0])}` : '',
      dropped.length > 0 ? `${countOf(dropped, 'field')} dropped${reason(dropped[0])}` : '',
    ].filter((n) => n !== '');
    const events = skippedEvents(skipped);
    const message = [received, ...notes].join('; ');
    return events.length > 0 ? { outcome: 'success', message, events } : { outcome: 'success', message };
  }
  const code = typeof error?.code === 'string' ? ` ${error.code}` : '';
  const first = details.find((d) => d.isWarning !== true);
  const why = first !== undefined ? reason(first) : typeof error?.message === 'string' ? `: ${error.message.slice(0, 300)}` : '';
  const label = `HTTP ${res.status}${code || why ? `, Microsoft error${code}${why}` : ''}`;
  const verdict = classifyHttpStatus(res.status, label, { redirectNote: ': redirect not followed', retryAfterMs: retryAfterMs(res.headers) });
  // A 400 ValidationError: no event was valid; each named one fails with its own reason.
  const events = res.status === 400 ? skippedEvents(details.filter((d) => d.isWarning !== true)) : [];
  return events.length > 0 ? { ...verdict, events } : verdict;
}

/** Each event a validation error names (by its index in `data`), failed with Microsoft's reasons for it. */
function skippedEvents(errors: Detail[]): { index: number; outcome: 'permanent'; message: string }[] {
  const byIndex = new Map<number, Detail[]>();
  for (const d of errors) if (typeof d.index === 'number' && Number.isInteger(d.index)) byIndex.set(d.index, [...(byIndex.get(d.index) ?? []), d]);
  return [...byIndex].map(([index, own]) => ({
    index, outcome: 'permanent', message: `Microsoft skipped the event:${own.slice(0, 3).map((d) => reason(d)).join(';')}`,
  }));
}

/** Distinct events (by index) or fields the details name. */
function countOf(details: Detail[], what: 'event' | 'field'): string {
  const n = what === 'event' ? new Set(details.map((d) => d.index)).size : details.length;
  return `${n} ${what}${n === 1 ? '' : 's'}`;
}

function reason(d: Detail | undefined): string {
  if (d === undefined) return '';
  const where = typeof d.propertyName === 'string' ? `${d.propertyName} ` : '';
  const what = typeof d.errorMessage === 'string' ? d.errorMessage : '';
  return where || what ? ` (${`${where}${what}`.trim().slice(0, 300)})` : '';
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function parse(text: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(text);
    return isRecord(v) ? v : null;
  } catch {
    return null;
  }
}
