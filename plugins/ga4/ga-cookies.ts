// GA4 cookies: `_ga` carries the client id, `_ga_<container>` the
// current session id, in the older GS1 or the May-2025 GS2 layout.

const POSITIVE_INT = /^[1-9]\d*$/;

/**
 * `_ga` → Measurement Protocol `client_id`: the last two parts, which must be positive integers.
 * @example parseGaClientId('GA1.1.123.456') // '123.456'
 * @example parseGaClientId('garbage')       // undefined
 */
export function parseGaClientId(value: string): string | undefined {
  const parts = value.trim().split('.');
  if (parts.length < 4 || !/^GA\d+$/i.test(parts[0])) return undefined;
  const [random, firstSeen] = parts.slice(-2);
  return POSITIVE_INT.test(random) && POSITIVE_INT.test(firstSeen) ? `${random}.${firstSeen}` : undefined;
}

/**
 * `_ga_<container>` → session id (session start, unix seconds).
 * @example parseGaSessionId('GS1.1.1700000000.3.1.1700000500.0.0.0') // '1700000000'
 * @example parseGaSessionId('GS2.1.s1700000000$o3$g1$t1700000500$j0$l0$h0') // '1700000000'
 */
export function parseGaSessionId(value: string): string | undefined {
  const v = value.trim();
  const gs1 = /^GS1\.\d+\.(\d+)(?:\.|$)/.exec(v);
  if (gs1) return POSITIVE_INT.test(gs1[1]) ? gs1[1] : undefined;
  const gs2 = /^GS2\.\d+\.(.+)$/.exec(v);
  if (!gs2) return undefined;
  const session = gs2[1].split('$').find((field) => field.startsWith('s'))?.slice(1);
  return session !== undefined && POSITIVE_INT.test(session) ? session : undefined;
}
