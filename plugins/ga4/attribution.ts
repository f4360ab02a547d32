// What GA4 reads from cookies: the client id from `_ga` (derived from the user when there
// is none, so one customer keeps one id) and the session id from the `_ga_<container>`
// cookie of the configured measurement id (the first one when none is configured).
import type { AttributionSpec, RefineContext } from 'tracklane/sdk';
import { deriveClientId } from './derived-client-id.ts';
import { parseGaClientId, parseGaSessionId } from './ga-cookies.ts';

export const GA4_ATTRIBUTION: AttributionSpec = {
  ids: { client_id: [{ cookie: '_ga', parse: parseGaClientId }] },
  refine(ctx) {
    clientId(ctx);
    sessions(ctx);
  },
};

/** `client_id_source`: `cookie` when read from `_ga`, `derived` when computed from the user. */
function clientId(ctx: RefineContext): void {
  if (ctx.ids.client_id !== undefined) {
    ctx.ids.client_id_source = 'cookie';
    return;
  }
  const key = clientIdKey(ctx.user);
  if (key !== undefined) {
    ctx.ids.client_id = deriveClientId(key, ctx.salt);
    ctx.ids.client_id_source = 'derived';
    ctx.warn({
      field: 'cookies._ga', code: 'CLIENT_ID_DERIVED', message: 'no usable _ga cookie; GA4 client_id derived from the user',
      sentence: 'no _ga cookie, client_id derived from the user',
    });
  } else {
    ctx.warn({
      field: 'cookies._ga', code: 'CLIENT_ID_MISSING', message: 'no usable _ga cookie and no user id, e-mail or phone to derive a GA4 client_id from',
      sentence: 'no _ga cookie and no user id, email or phone: no client_id to send',
    });
  }
}

/** `ga_session_ids`: every parsed session by container; `session_id`: the measurement id's, or the first. */
function sessions(ctx: RefineContext): void {
  const found: Record<string, string> = {};
  for (const { name, value } of ctx.cookies.withPrefix('_ga_')) {
    const container = name.slice('_ga_'.length);
    if (container === '' || container in found) continue;
    const session = parseGaSessionId(value);
    if (session !== undefined) found[container] = session;
    else ctx.warn({ field: `cookies.${name}`, code: 'COOKIE_MALFORMED', message: `cookie ${name} is neither GS1 nor GS2; ignored` });
  }
  if (Object.keys(found).length === 0) return;
  ctx.ids.ga_session_ids = found;
  const id = ctx.settings.measurement_id;
  const wanted = typeof id === 'string' ? id.replace(/^G-/i, '') : undefined;
  ctx.ids.session_id = wanted !== undefined ? found[wanted] : Object.values(found)[0];
}

function clientIdKey(user: RefineContext['user']): string | undefined {
  if (user == null) return undefined;
  const text = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v).trim() : '');
  const id = text(user.id);
  if (id !== '') return `id:${id}`;
  const email = text(user.email).toLowerCase();
  if (email !== '') return `email:${email}`;
  const phone = text(user.phone).replace(/[^\d+]/g, '');
  return phone !== '' ? `phone:${phone}` : undefined;
}
