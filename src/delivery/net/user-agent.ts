// Every outbound request names its sender: platforms find (and throttle less) a sender by its
// User-Agent — Reddit documents 429s for default user agents — and undici's dispatch adds none.
// Set by the sender, over whatever a plugin's headers say, so no request leaves without it.
import { packageVersion } from '../../package-version.ts';

export const USER_AGENT = `tracklane/${packageVersion()}`;

/** The request's headers with `user-agent: tracklane/<version>` in place of any spelling of their own. */
export function withUserAgent(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in headers) {
    if (Object.hasOwn(headers, k) && k.toLowerCase() !== 'user-agent') out[k] = headers[k];
  }
  out['user-agent'] = USER_AGENT;
  return out;
}
