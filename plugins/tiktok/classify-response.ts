// TikTok's reply → success / retryable / permanent.
// TikTok answers HTTP 200 with a JSON `code`; the code decides when there is one. Its answer
// names no event: an invalid parameter (40002) refuses the whole batch for what may be one
// bad event, so the request is split until that event is alone (it then fails with TikTok's
// message) and the valid ones go through.
import { type Classification, classifyHttpStatus, isRedirectStatus, isRetryableStatus, isSuccessStatus, type PlatformResponse, retryable, retryAfterMs } from 'tracklane/sdk';

const SUCCESS_CODES = new Set([0, 20001]);
const RATE_LIMITED = 40100;
/** An invalid parameter: about the events the request carries, not its token or pixel. */
const INVALID_PARAMETER = 40002;

export function classifyResponse(res: PlatformResponse): Classification {
  const { status } = res;
  const reply = parseReply(res.body);
  const label = reply.code === undefined
    ? `HTTP ${status}`
    : `HTTP ${status}, TikTok code ${reply.code}${reply.message ? `: ${reply.message}` : ''}`;
  // A retryable or redirect status decides alone; otherwise the code does, whatever the status.
  if (isRetryableStatus(status) || isRedirectStatus(status)) {
    return classifyHttpStatus(status, label, { redirectNote: ': redirect not followed', retryAfterMs: retryAfterMs(res.headers) });
  }
  const { code } = reply;
  if (code === undefined) {
    return isSuccessStatus(status) ? { outcome: 'success', message: label } : { outcome: 'permanent', message: label };
  }
  if (SUCCESS_CODES.has(code) && isSuccessStatus(status)) return { outcome: 'success', message: label };
  // 40100 is the rate limit; 5xxxx are TikTok's internal errors.
  if (code === RATE_LIMITED || (code >= 50000 && code <= 59999)) return retryable(label, retryAfterMs(res.headers));
  // 40002 invalid parameter: split; 40001 auth/permission and any other code: fix the request.
  return code === INVALID_PARAMETER ? { outcome: 'permanent', message: label, others: 'split' } : { outcome: 'permanent', message: label };
}

/** `{code, message}` of a reply; a truncated body still yields its code. */
function parseReply(body: string): { code?: number; message?: string } {
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
    const { code, message } = parsed as Record<string, unknown>;
    return {
      code: typeof code === 'number' ? code : undefined,
      message: typeof message === 'string' ? message.slice(0, 300) : undefined,
    };
  } catch {
    const match = /^\s*\{[^]*?"code"\s*:\s*(\d+)/.exec(body);
    return match === null ? {} : { code: Number(match[1]) };
  }
}
