// Calls an endpoint's handler in the handler pool, with a hard time limit and a memory
// limit, and checks what it returns, so a handler bug becomes a logged 500 instead of a
// malformed event in the pipeline or a stalled process.
import { AppError } from '../errors.ts';
import { join } from 'node:path';
import { CustomValidationError } from './custom-validation-error.ts';
import { createHandlerPool, HandlerStopped, type HandlerPool } from './handler-pool.ts';
import type { HandlerTaskResult } from './handler-worker.ts';
import type { CustomRecord, EndpointVersion, HandlerContext, HandlerResult, LoadedEndpoint, StandardEventPayload } from './types.ts';
import { isRecord } from '../schema/guards.ts';

export const HANDLER_TIMEOUT_MS = 5_000;
/** As many events as a body may have array elements (json-safety's limit). */
export const MAX_EVENTS_PER_REQUEST = 1000;
const RECORD_TYPE = /^[a-z][a-z0-9_]{0,63}$/;


/** Problems with a handler's result; empty when it keeps the contract. */
export function checkHandlerResult(r: unknown): string[] {
  if (!isRecord(r)) return ['the handler must return an object { events, messages, recordsProcessed, records? }'];
  const problems: string[] = [];
  if (!Array.isArray(r.events)) problems.push('events must be an array of standard event payloads');
  else {
    if (r.events.length > MAX_EVENTS_PER_REQUEST) problems.push(`events has more than ${MAX_EVENTS_PER_REQUEST} items`);
    r.events.forEach((e, i) => {
      if (!isRecord(e) || !isRecord(e.event)) problems.push(`events[${i}] must be an object with an "event" member`);
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
        if (!isRecord(rec) || typeof rec.type !== 'string' || !RECORD_TYPE.test(rec.type) || !isRecord(rec.data)) {
          problems.push(`records[${i}] must be { type: snake_case name, data: object, key?: string }`);
        } else if (rec.key !== undefined && (typeof rec.key !== 'string' || rec.key === '' || rec.key.length > 200)) {
          problems.push(`records[${i}].key must be a non-empty string of at most 200 characters`);
        }
      });
    }
  }
  return problems;
}


export interface HandlerOutput {
  events: StandardEventPayload[];
  records: CustomRecord[];
  messages: string[];
  recordsProcessed: number;
}

export interface RunHandlerOptions {
  pool: HandlerPool;
  timeoutMs?: number;
}

let sharedPool: HandlerPool | undefined;
/** The process-wide handler pool, started on first use (the server closes it at shutdown). */
export function defaultHandlerPool(): HandlerPool {
  return (sharedPool ??= createHandlerPool());
}
export async function closeDefaultHandlerPool(): Promise<void> {
  const p = sharedPool;
  sharedPool = undefined;
  await p?.close();
}

/** Runs the handler in the pool (see handler-pool.ts) and checks what it returns. */
export async function runHandler(ep: LoadedEndpoint, version: EndpointVersion, body: unknown, ctx: HandlerContext, opts: RunHandlerOptions): Promise<HandlerOutput> {
  const { logger, ...plainCtx } = ctx;
  const who = `handler of ${ep.customer}/${ep.name} version ${version.version}`;
  let out: HandlerTaskResult;
  try {
    out = await opts.pool.run({ file: join(version.dir, 'handler.ts'), fresh: version.fresh, body, ctx: plainCtx }, opts.timeoutMs ?? HANDLER_TIMEOUT_MS);
  } catch (err) {
    if (err instanceof HandlerStopped) throw new AppError('INTERNAL_ERROR', 500, `${who} ${err.message}`, { cause: err });
    throw new AppError('INTERNAL_ERROR', 500, `${who} failed`, { cause: err });
  }
  for (const line of out.logs) logger[line.level](line.obj, line.msg);
  if (!out.ok) {
    if ('problems' in out) throw new CustomValidationError(out.problems);
    throw new AppError('INTERNAL_ERROR', 500, `${who} failed`, { cause: new Error(out.error) });
  }
  const result = out.result as HandlerResult;
  const problems = checkHandlerResult(result);
  if (problems.length > 0) {
    throw new AppError('INTERNAL_ERROR', 500, `${who} broke the contract: ${problems.join('; ')}`);
  }
  return {
    events: result.events,
    records: result.records ?? [],
    messages: [...result.messages],
    recordsProcessed: result.recordsProcessed,
  };
}
