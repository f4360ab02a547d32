// Google Ads reply classification. With partialFailure the API answers 200 and lists
// per-conversion errors in `partialFailureError`, each naming its conversion by index: each
// conversion is settled by its own codes, the others were recorded.
import { classifyHttpStatus, isSuccessStatus, retryable, retryAfterMs, type Classification, type PlatformResponse } from 'tracklane/sdk';

const HOUR_MS = 3_600_000;

/** Transient on Google's side: retry with the usual backoff. */
const RETRYABLE = new Set([
  'RESOURCE_EXHAUSTED', 'RESOURCE_TEMPORARILY_EXHAUSTED', 'TRANSIENT_ERROR', 'INTERNAL_ERROR', 'DEADLINE_EXCEEDED',
]);
/** "Too early": the same request succeeds after the wait the error enum names. */
const RETRY_AFTER: Readonly<Record<string, number>> = {
  TOO_RECENT_EVENT: 6 * HOUR_MS,
  TOO_RECENT_CONVERSION_ACTION: 6 * HOUR_MS,
  // Adjustments need a conversion at least 24 h old (ConversionAdjustmentUploadError).
  TOO_RECENT_CONVERSION: 24 * HOUR_MS,
};
/** The conversion is already there (a retry of a request that had landed): nothing to redo. */
const ALREADY_RECORDED = new Set(['ORDER_ID_ALREADY_IN_USE', 'CLICK_CONVERSION_ALREADY_EXISTS', 'CONVERSION_ALREADY_RETRACTED']);

interface AdsError { code: string; index?: number; message?: string }

export function classifyResponse(res: PlatformResponse): Classification {
  const body = parseJson(res.body);
  if (isSuccessStatus(res.status)) return classifyPartialFailure(body);

  const error = isObject(body) && isObject(body.error) ? body.error : undefined;
  const status = typeof error?.status === 'string' ? ` ${error.status}` : '';
  const codes = error ? adsErrors(error.details) : [];
  const message = `Google Ads answered HTTP ${res.status}${status}${codes.length > 0 ? `: ${describe(codes)}` : ''}`;
  return classifyHttpStatus(res.status, message, {
    redirectNote: ' (redirects are not followed; check the endpoint)',
    retryAfterMs: retryAfterMs(res.headers, { fractions: true }) ?? retryDelayMs(error?.details),
  });
}

/**
 * With partialFailure Google answers 200 and names each refused conversion by its index in
 * the request: each is judged by its own codes (with Google's own message), and the others
 * were recorded. Errors that name no conversion judge the whole request, as before.
 */
function classifyPartialFailure(body: unknown): Classification {
  const failure = isObject(body) && isObject(body.partialFailureError) ? body.partialFailureError : undefined;
  if (failure === undefined) return { outcome: 'success' };
  const errors = adsErrors(failure.details);
  if (errors.length === 0) {
    if (failure.code === undefined || failure.code === 0) return { outcome: 'success' };
    const text = typeof failure.message === 'string' ? `: ${failure.message.slice(0, 200)}` : '';
    return { outcome: 'permanent', message: `Google Ads partial failure (code ${String(failure.code)})${text}` };
  }
  const byIndex = new Map<number, AdsError[]>();
  for (const e of errors) if (e.index !== undefined) byIndex.set(e.index, [...(byIndex.get(e.index) ?? []), e]);
  const events = [...byIndex].map(([index, own]) => ({ index, ...judgeCodes(own, ownReasons) }));
  const unplaced = errors.filter((e) => e.index === undefined);
  const request = unplaced.length > 0 ? judgeCodes(unplaced, describe) : { outcome: 'success' as const, message: `partial failure: ${describe(errors)}` };
  return events.length > 0 ? { ...request, events } : request;
}

/**
 * The verdict of some codes: success when each only says "already recorded" (a resend of a
 * conversion that had landed), retryable when any may still succeed later, else permanent.
 */
function judgeCodes(errors: AdsError[], say: (errors: AdsError[]) => string): Classification {
  const failed = errors.filter((e) => !ALREADY_RECORDED.has(e.code));
  if (failed.length === 0) return { outcome: 'success', message: `already recorded: ${say(errors)}` };
  const waits = failed.map((e) => RETRY_AFTER[e.code]).filter((ms): ms is number => ms !== undefined);
  if (waits.length > 0 || failed.some((e) => RETRYABLE.has(e.code))) {
    return retryable(`Google Ads partial failure, retry later: ${say(failed)}`, waits.length > 0 ? Math.max(...waits) : undefined);
  }
  return { outcome: 'permanent', message: `Google Ads partial failure: ${say(failed)}` };
}

/** One conversion's codes with Google's own messages: `UNPARSEABLE_GCLID (The gclid could not be decoded.)`. */
function ownReasons(errors: AdsError[]): string {
  return errors.slice(0, 3).map((e) => (e.message === undefined ? e.code : `${e.code} (${e.message.slice(0, 200)})`)).join('; ');
}

/** `GoogleAdsFailure.errors[]` of every detail: the enum value of `errorCode` and the list index. */
function adsErrors(details: unknown): AdsError[] {
  if (!Array.isArray(details)) return [];
  const out: AdsError[] = [];
  for (const detail of details) {
    if (!isObject(detail) || !Array.isArray(detail.errors)) continue;
    for (const e of detail.errors) {
      if (!isObject(e) || !isObject(e.errorCode)) continue;
      const code = Object.values(e.errorCode).find((v): v is string => typeof v === 'string');
      if (code !== undefined) out.push({ code, index: listIndex(e.location), ...(typeof e.message === 'string' ? { message: e.message } : {}) });
    }
  }
  return out;
}

/** `location.fieldPathElements[0].index`: which conversion of the request failed. */
function listIndex(location: unknown): number | undefined {
  if (!isObject(location) || !Array.isArray(location.fieldPathElements)) return undefined;
  const head: unknown = location.fieldPathElements[0];
  return isObject(head) && typeof head.index === 'number' ? head.index : undefined;
}

/** `TOO_RECENT_EVENT at #0, #3; UNPARSEABLE_GCLID at #1`, at most five codes. */
function describe(errors: AdsError[]): string {
  const byCode = new Map<string, number[]>();
  for (const e of errors) {
    const list = byCode.get(e.code) ?? [];
    if (e.index !== undefined) list.push(e.index);
    byCode.set(e.code, list);
  }
  const parts = [...byCode].slice(0, 5).map(([code, idx]) => (idx.length > 0 ? `${code} at #${idx.slice(0, 5).join(', #')}` : code));
  if (byCode.size > 5) parts.push(`${byCode.size - 5} more`);
  return parts.join('; ');
}

/** A `retryDelay: "30s"` (RetryInfo, QuotaErrorDetails) anywhere in the error details. */
function retryDelayMs(node: unknown, depth = 0): number | undefined {
  if (depth > 6 || node === null || typeof node !== 'object') return undefined;
  if (!Array.isArray(node)) {
    const delay = (node as Record<string, unknown>).retryDelay;
    const m = typeof delay === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(delay) : null;
    if (m) return Math.round(Number(m[1]) * 1000);
  }
  for (const child of Object.values(node)) {
    const found = retryDelayMs(child, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
