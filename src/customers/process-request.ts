// After every check has passed: run the handler, validate each standard event it produced
// exactly as endpoint 1 does, then either report what would happen (env=test: nothing
// stored, nothing delivered) or commit events and records and acknowledge (production).
import { CustomValidationError } from './custom-validation-error.ts';
import { unavailable } from '../errors.ts';
import type { Account } from '../accounts/types.ts';
import { acceptEvents, validateFor } from '../intake/accept-events.ts';
import type { ValidationResult } from '../schema/types.ts';
import type { EventStatus } from '../store/types.ts';
import type { DestinationPreview } from '../pipeline/preview-event.ts';
import { testFeedback } from '../pipeline/test-feedback.ts';
import { issueString } from '../schema/issue-text.ts';
import type { AppContext } from '../http/types.ts';
import type { StoredCustomRecord } from '../store/custom-record-contract.ts';

/** What running a request needs (the route's deps include these). */
export interface ProcessDeps {
  writer: Pick<EventWriter, 'writeMany'>;
  metrics: Metrics;
  events: Pick<EventStore, 'seenProducts' | 'isDuplicate'>;
  preview: PreviewDeps;
  destinations: DestinationCache;
  records: CustomRecordStore;
  /** Where handlers run (default: the process-wide pool) and how long one may take. */
  handlerPool?: HandlerPool;
  handlerTimeoutMs?: number;
}
import type { EventStore } from '../store/types.ts';
import type { EventWriter } from '../store/event-writer.ts';
import type { PreviewDeps } from '../pipeline/preview-event.ts';
import type { DestinationCache } from '../destinations/destination-cache.ts';
import type { Metrics } from '../http/metrics.ts';
import type { HandlerPool } from './handler-pool.ts';
import type { CustomRecordStore } from '../store/custom-record-contract.ts';
import { defaultHandlerPool, runHandler } from './run-handler.ts';
import type { CustomEnv, CustomRecord, EndpointVersion, HandlerContext, LoadedEndpoint, StandardEventPayload } from './types.ts';
import { deprecationMessage } from './version-selection.ts';
import { boundTestAnswer, TEST_PREVIEW_EVENTS, type PreviewedEvent } from './bound-test-answer.ts';

/** `valid`: every produced event passed; `valid_with_warnings`; `partially_rejected`: some failed; `rejected`: all failed. */
export type ValidationStatus = 'valid' | 'valid_with_warnings' | 'partially_rejected' | 'rejected';

export interface CustomSuccessBody {
  result: 'ok';
  messages: string[];
  custom_data: {
    processing_time_ms: number;
    records_processed: number;
    validation_status: ValidationStatus;
    env: CustomEnv;
    events: Record<string, unknown>[] | PreviewedEvent[];
    /** env=test: the records the handler produced (nothing stored); a marker when elided to keep the answer within 1 MiB. */
    records?: CustomRecord[] | string;
    /** env=test: produced events beyond the first TEST_PREVIEW_EVENTS, validated but not listed. */
    events_not_previewed?: number;
    /** env=production: how many records were committed. */
    records_stored?: number;
  };
}

interface Produced {
  payload: StandardEventPayload;
  result: ValidationResult;
  label: string;
}

function statusOf(produced: Produced[]): ValidationStatus {
  const failed = produced.filter((p) => p.result.errors.length > 0).length;
  if (failed > 0) return failed === produced.length ? 'rejected' : 'partially_rejected';
  return produced.some((p) => p.result.warnings.length > 0) ? 'valid_with_warnings' : 'valid';
}

function label(p: StandardEventPayload, i: number): string {
  const id = typeof p.event.id === 'string' ? ` ${p.event.id}` : '';
  return `event ${i + 1} (${String(p.event.name)}${id})`;
}

const eventIdOf = (p: StandardEventPayload): string | null => (typeof p.event.id === 'string' ? p.event.id.slice(0, 128) : null);
const nameOf = (p: StandardEventPayload): string | null => (typeof p.event.name === 'string' ? p.event.name.slice(0, 128) : null);

interface Request {
  ctx: AppContext;
  endpoint: LoadedEndpoint;
  /** The version serving the request (its handler runs; custom_data.version names it). */
  version: EndpointVersion;
  env: CustomEnv;
  startedAt: number;
  now: number;
}

export async function processRequest(deps: ProcessDeps, req: Request): Promise<CustomSuccessBody> {
  const { ctx, endpoint, version, env, now } = req;
  const account = ctx.state.account!;
  const hctx: HandlerContext = {
    account: { scriptId: account.scriptId, name: account.name, country: account.country, host: account.host },
    env,
    now,
    requestId: ctx.state.requestId,
    endpoint: { customer: endpoint.customer, name: endpoint.name, version: version.version },
    settings: endpoint.config.settings ?? {},
    logger: ctx.state.log.child({ customer: endpoint.customer, endpoint: endpoint.name }),
  };
  const out = await runHandler(endpoint, version, ctx.state.body, hctx, { pool: deps.handlerPool ?? defaultHandlerPool(), timeoutMs: deps.handlerTimeoutMs });
  const produced: Produced[] = out.events.map((payload, i) => ({ payload, result: validateFor(account, payload, deps.metrics), label: label(payload, i) }));
  // Every event refused: the request failed (400), and nothing of it is stored, in either env.
  if (produced.length > 0 && produced.every((p) => p.result.errors.length > 0)) throw allRejected(produced);
  const messages = [...out.messages];
  for (const p of produced) {
    if (p.result.errors.length > 0) messages.push(`${p.label}: rejected: ${p.result.errors.map(issueString).join('; ')}`);
  }
  const deprecated = deprecationMessage(endpoint, version);
  if (deprecated) messages.push(deprecated);

  const base = {
    records_processed: out.recordsProcessed,
    validation_status: statusOf(produced),
    env,
  };
  if (env === 'test') {
    const events = await testReport(deps, account, produced.slice(0, TEST_PREVIEW_EVENTS), ctx.state.requestId, now);
    const notPreviewed = produced.length - events.length;
    if (notPreviewed > 0) {
      messages.push(`test mode previews the first ${TEST_PREVIEW_EVENTS} events; ${notPreviewed} more were validated (rejections are listed above) but not previewed`);
    }
    messages.push('test mode: nothing was stored or delivered');
    return boundTestAnswer({
      result: 'ok',
      messages,
      custom_data: {
        processing_time_ms: elapsed(req.startedAt), ...base, events, records: out.records,
        ...(notPreviewed > 0 && { events_not_previewed: notPreviewed }),
      },
    });
  }

  const statuses = await commit(deps, ctx, endpoint, produced, out.records, now);
  const events = produced.map((p, i) => ({ name: nameOf(p.payload), event_id: eventIdOf(p.payload), status: statuses[i] }));
  statuses.forEach((s, i) => {
    if (s === 'duplicate') messages.push(`${produced[i].label}: duplicate of an event already received; not forwarded again`);
  });
  return {
    result: 'ok',
    messages,
    custom_data: { processing_time_ms: elapsed(req.startedAt), ...base, events, records_stored: out.records.length },
  };
}

/** 400 CUSTOM_VALIDATION_ERROR naming, for every produced event, each of its errors. */
function allRejected(produced: Produced[]): CustomValidationError {
  return new CustomValidationError(produced.flatMap((p, i) => p.result.errors.map((e) => ({
    field: `events[${i}].${e.field}`,
    expected_format: `a valid ${String(p.payload.event?.name ?? 'event')} event (${e.code})`,
    message: `${p.label}: rejected: ${issueString(e)}`,
  }))));
}

const elapsed = (startedAt: number): number => Math.round((performance.now() - startedAt) * 100) / 100;

/**
 * env=test: per event its errors, warnings, normalised form and endpoint 2's per-destination
 * preview, planned where endpoint 2 plans it (the preview pool when PREVIEW_THREADS is set).
 */
async function testReport(
  deps: ProcessDeps,
  account: Account,
  produced: Produced[],
  requestId: string,
  now: number,
): Promise<PreviewedEvent[]> {
  const destinations = produced.some((p) => p.result.event) ? await deps.destinations.list(account.scriptId) : [];
  return Promise.all(produced.map(async (p, i) => {
    const warnings = p.result.warnings.map(issueString);
    let preview: DestinationPreview[] = [];
    const event = p.result.event;
    if (event) {
      const feedback = await testFeedback(deps, { account, destinations, event, eventId: event.event.id ?? `test-${requestId}-${i + 1}`, now });
      warnings.push(...feedback.warnings);
      preview = feedback.preview;
    }
    return {
      name: nameOf(p.payload),
      event_id: eventIdOf(p.payload),
      status: p.result.errors.length > 0 ? 'would_reject' : 'would_accept',
      errors: p.result.errors.map(issueString),
      warnings,
      payload: p.payload,
      data_normalized: event ?? null,
      preview,
    };
  }));
}

/** env=production: every produced event through the one accept path (as endpoint 1), then the records; resolves after both commit. */
async function commit(
  deps: ProcessDeps,
  ctx: AppContext,
  endpoint: LoadedEndpoint,
  produced: Produced[],
  records: CustomRecord[],
  now: number,
): Promise<EventStatus[]> {
  const { account, requestId, log } = ctx.state;
  const input = { account: account!, requestId, source: `custom:${endpoint.name}`, log, receivedAt: now };
  const recordRows: StoredCustomRecord[] = records.map((r) => ({
    scriptId: account!.scriptId,
    customer: endpoint.customer,
    endpoint: endpoint.name,
    type: r.type,
    key: r.key ?? null,
    requestId,
    receivedAt: now,
    data: r.data,
  }));
  // Events first (their commit failing answers 503 with nothing stored): records are written
  // only once the events are durable, so a failure never leaves records without their
  // events. A retry is harmless either way: events with an event.id deduplicate, keyed
  // records replace.
  const accepted = await acceptEvents(deps, input, produced.map((p) => ({ body: p.payload, result: p.result })));
  try {
    await deps.records.write(recordRows);
  } catch (err) {
    ctx.state.log.error({ err }, 'custom records commit failed');
    throw unavailable(err);
  }
  return accepted.map((a) => a.status);
}
