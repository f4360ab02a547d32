// Meta's reply → success / retryable / permanent. Graph
// error codes in the body decide first; the HTTP status decides when there is none.
// Meta refuses a whole request for one invalid event and names none of them: an invalid
// parameter (code 100) splits the request until the invalid event is alone (it then fails
// with Meta's own words, error_user_title / error_user_msg) and the valid ones go through.
import { type Classification, classifyHttpStatus, isSuccessStatus, type PlatformResponse, retryable, retryAfterMs } from 'tracklane/sdk';

/** 1, 2 transient; 4, 17, 32, 613 and 80000–80999 throttling; 341, 368 "wait". */
const RETRYABLE_CODES = new Set([1, 2, 4, 17, 32, 341, 368, 613]);
/** 100 invalid parameter (incl. event too old), 190 token, 10 and 200–299 permission, 3 capability. */
const PERMANENT_CODES = new Set([3, 10, 100, 190]);
/** An invalid parameter: about one event of the request, unless the subcode says the pixel itself (33: no such object). */
const INVALID_PARAMETER = 100;
const NO_SUCH_OBJECT = 33;

interface GraphError {
  code?: number;
  subcode?: number;
  message?: string;
  /** Meta's own words for the person fixing it: `error_user_title: error_user_msg`. */
  user?: string;
  transient: boolean;
}

export function classifyResponse(res: PlatformResponse): Classification {
  const { status } = res;
  const error = graphError(res.body);
  if (error !== null && (error.code !== undefined || error.transient)) {
    const label = describe(status, error);
    if (error.transient || isRetryableCode(error.code)) return retryable(label, retryAfterMs(res.headers));
    if (isPermanentCode(error.code)) return refusal(label, error);
  }
  if (isSuccessStatus(status)) {
    if (error !== null) return refusal(describe(status, error), error);
    return { outcome: 'success', message: received(res.body) };
  }
  const label = error !== null ? describe(status, error) : `HTTP ${status}`;
  return classifyHttpStatus(status, label, { redirectNote: ': redirect not followed', retryAfterMs: retryAfterMs(res.headers) });
}

/**
 * A permanent refusal. Meta refuses the whole request for one invalid event without naming it,
 * so an invalid parameter splits the request (a lone event takes the refusal).
 */
function refusal(message: string, e: GraphError): Classification {
  const split = e.code === INVALID_PARAMETER && e.subcode !== NO_SUCH_OBJECT;
  return split ? { outcome: 'permanent', message, others: 'split' } : { outcome: 'permanent', message };
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
    user: userText(e.error_user_title, e.error_user_msg),
    transient: e.is_transient === true,
  };
}

function describe(status: number, e: GraphError): string {
  const code = e.code === undefined ? '' : ` code ${e.code}${e.subcode === undefined ? '' : `/${e.subcode}`}`;
  return `HTTP ${status}, Graph error${code}${e.transient ? ' (transient)' : ''}${e.message ? `: ${e.message}` : ''}${e.user ? ` (${e.user})` : ''}`;
}

function userText(title: unknown, msg: unknown): string | undefined {
  const parts = [title, msg].filter((v): v is string => typeof v === 'string' && v.trim() !== '');
  return parts.length === 0 ? undefined : parts.join(': ').slice(0, 300);
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
