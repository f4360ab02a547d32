// Meta's reply → success / retryable / permanent. Graph
// error codes in the body decide first; the HTTP status decides when there is none.
import { classifyHttpStatus, isSuccessStatus, retryable, retryAfterMs, type Classification, type PlatformResponse } from 'tracklane/sdk';

/** 1, 2 transient; 4, 17, 32, 613 and 80000–80999 throttling; 341, 368 "wait". */
const RETRYABLE_CODES = new Set([1, 2, 4, 17, 32, 341, 368, 613]);
/** 100 invalid parameter (incl. event too old), 190 token, 10 and 200–299 permission, 3 capability. */
const PERMANENT_CODES = new Set([3, 10, 100, 190]);

interface GraphError {
  code?: number;
  subcode?: number;
  message?: string;
  transient: boolean;
}

export function classifyResponse(res: PlatformResponse): Classification {
  const { status } = res;
  const error = graphError(res.body);
  if (error !== null && (error.code !== undefined || error.transient)) {
    const label = describe(status, error);
    if (error.transient || isRetryableCode(error.code)) return retryable(label, retryAfterMs(res.headers));
    if (isPermanentCode(error.code)) return { outcome: 'permanent', message: label };
  }
  if (isSuccessStatus(status)) {
    if (error !== null) return { outcome: 'permanent', message: describe(status, error) };
    return { outcome: 'success', message: received(res.body) };
  }
  const label = error !== null ? describe(status, error) : `HTTP ${status}`;
  return classifyHttpStatus(status, label, { redirectNote: ': redirect not followed', retryAfterMs: retryAfterMs(res.headers) });
}

function isRetryableCode(code: number | undefined): boolean {
  return code !== undefined && (RETRYABLE_CODES.has(code) || (code >= 80000 && code <= 80999));
}

function isPermanentCode(code: number | undefined): boolean {
  return code !== undefined && (PERMANENT_CODES.has(code) || (code >= 200 && code <= 299));
}

/** The `error` object of a Graph reply; a truncated body still yields its code. */
function graphError(body: string): GraphError | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    const code = /"error"\s*:\s*\{[^]*?"code"\s*:\s*(\d+)/.exec(body);
    if (code === null) return null;
    const transient = /"is_transient"\s*:\s*true/.test(body);
    return { code: Number(code[1]), transient };
  }
  if (!isRecord(parsed) || !isRecord(parsed.error)) return null;
  const e = parsed.error;
  return {
    code: typeof e.code === 'number' ? e.code : undefined,
    subcode: typeof e.error_subcode === 'number' ? e.error_subcode : undefined,
    message: typeof e.message === 'string' ? e.message.slice(0, 300) : undefined,
    transient: e.is_transient === true,
  };
}

function describe(status: number, e: GraphError): string {
  const code = e.code === undefined ? '' : ` code ${e.code}${e.subcode === undefined ? '' : `/${e.subcode}`}`;
  return `HTTP ${status}, Graph error${code}${e.transient ? ' (transient)' : ''}${e.message ? `: ${e.message}` : ''}`;
}

function received(body: string): string {
  try {
    const parsed: unknown = JSON.parse(body);
    if (isRecord(parsed) && typeof parsed.events_received === 'number') return `events_received ${parsed.events_received}`;
  } catch {
    // A 2xx without a readable body is still an accepted request.
  }
  return 'accepted';
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
