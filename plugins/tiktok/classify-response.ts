// TikTok's reply → success / retryable / permanent (destinations.md §0.5, TikTok row).
// TikTok answers HTTP 200 with a JSON `code`; the code decides when there is one.
import type { Classification, PlatformResponse } from '../../src/destinations/types.ts';

const SUCCESS_CODES = new Set([0, 20001]);
const RATE_LIMITED = 40100;

export function classifyResponse(res: PlatformResponse): Classification {
  const { status } = res;
  const reply = parseReply(res.body);
  const label = reply.code === undefined
    ? `HTTP ${status}`
    : `HTTP ${status}, TikTok code ${reply.code}${reply.message ? `: ${reply.message}` : ''}`;
  if (status === 408 || status === 429 || status >= 500) return retryable(label, res.headers);
  if (status >= 300 && status < 400) return { outcome: 'permanent', message: `${label}: redirect not followed` };
  const { code } = reply;
  if (code === undefined) {
    return status >= 200 && status < 300 ? { outcome: 'success', message: label } : { outcome: 'permanent', message: label };
  }
  if (SUCCESS_CODES.has(code) && status >= 200 && status < 300) return { outcome: 'success', message: label };
  // 40100 is the rate limit; 5xxxx are TikTok's internal errors.
  if (code === RATE_LIMITED || (code >= 50000 && code <= 59999)) return retryable(label, res.headers);
  // 40001 auth/permission, 40002 invalid parameter, and any other code: fix the request.
  return { outcome: 'permanent', message: label };
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

function retryable(message: string, headers: Record<string, string>): Classification {
  const after = retryAfterMs(headers);
  return after === undefined ? { outcome: 'retryable', message } : { outcome: 'retryable', message, retryAfterMs: after };
}

/** Retry-After in delta-seconds; an HTTP date is ignored (no clock here). */
function retryAfterMs(headers: Record<string, string>): number | undefined {
  const key = Object.keys(headers).find((k) => k.toLowerCase() === 'retry-after');
  const raw = key === undefined ? undefined : headers[key]?.trim();
  if (raw === undefined || !/^\d+$/.test(raw)) return undefined;
  return Number(raw) * 1000;
}
