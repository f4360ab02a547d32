// GA4 reply classification: the collect endpoint answers 2xx for any
// payload, so only transport-level statuses matter; a debug-endpoint reply with
// validationMessages is the one payload error GA4 ever reports.
import { type Classification, type PlatformResponse, classifyHttpStatus, isSuccessStatus, retryAfterMs } from 'tracklane/sdk';

interface ValidationMessage { fieldPath?: unknown; validationCode?: unknown; description?: unknown }

export function classifyResponse(res: PlatformResponse): Classification {
  if (isSuccessStatus(res.status)) {
    const messages = validationMessages(res.body);
    if (messages.length === 0) return { outcome: 'success' };
    const list = messages.slice(0, 5).map((m) => `${String(m.validationCode ?? 'INVALID')} at ${String(m.fieldPath ?? '?')}`);
    return { outcome: 'permanent', message: `GA4 validation failed: ${list.join('; ')}` };
  }
  return classifyHttpStatus(res.status, `GA4 answered HTTP ${res.status}`, {
    redirectNote: ' (redirects are not followed; check the endpoint)',
    retryAfterMs: retryAfterMs(res.headers, { fractions: true }),
  });
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
