// Calls an endpoint's handler with a time limit and checks what it returns, so a handler
// bug becomes a logged 500 instead of a malformed event in the pipeline.
import { AppError } from '../errors.ts';
import { isCustomValidationError } from './custom-validation-error.ts';
import type { CustomRecord, HandlerContext, HandlerResult, LoadedEndpoint, StandardEventPayload } from './types.ts';

export const HANDLER_TIMEOUT_MS = 5_000;
/** As many events as a body may have array elements (json-safety's limit). */
export const MAX_EVENTS_PER_REQUEST = 1000;
const RECORD_TYPE = /^[a-z][a-z0-9_]{0,63}$/;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Problems with a handler's result; empty when it keeps the contract. */
export function checkHandlerResult(r: unknown): string[] {
  if (!isObject(r)) return ['the handler must return an object { events, messages, recordsProcessed, records? }'];
  const problems: string[] = [];
  if (!Array.isArray(r.events)) problems.push('events must be an array of standard event payloads');
  else {
    if (r.events.length > MAX_EVENTS_PER_REQUEST) problems.push(`events has more than ${MAX_EVENTS_PER_REQUEST} items`);
    r.events.forEach((e, i) => {
      if (!isObject(e) || !isObject(e.event)) problems.push(`events[${i}] must be an object with an "event" member`);
    });
  }
  if (!Array.isArray(r.messages) || r.messages.some((m) => typeof m !== 'string')) problems.push('messages must be an array of strings');
  if (typeof r.recordsProcessed !== 'number' || !Number.isInteger(r.recordsProcessed) || r.recordsProcessed < 0) {
    problems.push('recordsProcessed must be a whole number >= 0');
  }
  if (r.records !== undefined) {
    if (!Array.isArray(r.records)) problems.push('records must be an array when given');
    else {
      r.records.forEach((rec, i) => {
        if (!isObject(rec) || typeof rec.type !== 'string' || !RECORD_TYPE.test(rec.type) || !isObject(rec.data)) {
          problems.push(`records[${i}] must be { type: snake_case name, data: object, key?: string }`);
        } else if (rec.key !== undefined && (typeof rec.key !== 'string' || rec.key === '' || rec.key.length > 200)) {
          problems.push(`records[${i}].key must be a non-empty string of at most 200 characters`);
        }
      });
    }
  }
  return problems;
}

/** JSON round trip: what is validated and stored is exactly what JSON can carry (no Dates, undefined, NaN). */
const plain = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

export interface HandlerOutput {
  events: StandardEventPayload[];
  records: CustomRecord[];
  messages: string[];
  recordsProcessed: number;
}

export async function runHandler(ep: LoadedEndpoint, body: unknown, ctx: HandlerContext, timeoutMs = HANDLER_TIMEOUT_MS): Promise<HandlerOutput> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`handler took longer than ${timeoutMs} ms`)), timeoutMs);
  });
  let result: HandlerResult;
  try {
    result = await Promise.race([Promise.resolve().then(() => ep.handler(body, ctx)), timeout]);
  } catch (err) {
    if (isCustomValidationError(err)) throw err;
    throw new AppError('INTERNAL_ERROR', 500, `handler of ${ep.customer}/${ep.name} failed`, { cause: err });
  } finally {
    clearTimeout(timer);
  }
  const problems = checkHandlerResult(result);
  if (problems.length > 0) {
    throw new AppError('INTERNAL_ERROR', 500, `handler of ${ep.customer}/${ep.name} broke the contract: ${problems.join('; ')}`);
  }
  return {
    events: plain(result.events),
    records: plain(result.records ?? []),
    messages: [...result.messages],
    recordsProcessed: result.recordsProcessed,
  };
}
