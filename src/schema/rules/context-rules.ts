// The `context` member: defaults (environment prod on cart_viewed, where context may be
// absent; url from the account's host on every event), data_source warnings, and the
// override_ip spelling. Type and format errors come from the schema.
import { DATA_SOURCES } from '../event-requirements.ts';
import { dropNulls, isRecord, quote, type JsonObject } from '../guards.ts';
import type { EventContext } from '../types.ts';
import { warn, type RuleContext } from './rule-context.ts';

const CONTEXT_MEMBERS = [
  'environment', 'data_source', 'user_agent', 'overide_ip', 'override_ip',
  'url', 'landing_url', 'referrer_url', 'page_type',
] as const;
const DATA_SOURCE_LIST = [...DATA_SOURCES].join(', ');

export function normaliseContext(raw: unknown, rc: RuleContext): EventContext {
  let c: JsonObject;
  if (isRecord(raw)) {
    c = raw;
    dropNulls(c, CONTEXT_MEMBERS);
    if (c.environment === undefined && rc.cart) {
      warn(rc, 'context.environment', 'DEFAULT_APPLIED', 'context.environment is missing; "prod" is assumed');
    }
  } else {
    // A wrong type is a schema error; absence is one too, except on cart_viewed.
    if (!rc.cart || (raw !== undefined && raw !== null)) return { environment: 'prod' };
    c = {};
    warn(rc, 'context', 'DEFAULT_APPLIED',
      'context is missing; environment "prod" is assumed (context is recommended on cart_viewed)');
  }
  if (c.environment === undefined) c.environment = 'prod';
  checkDataSource(c, rc);
  readOverrideIp(c, rc);
  if (c.url === undefined) fallBackToHost(c, rc);
  return c as EventContext;
}

function checkDataSource(c: JsonObject, rc: RuleContext): void {
  const source = c.data_source;
  if (source === undefined) {
    warn(rc, 'context.data_source', 'RECOMMENDED_FIELD_MISSING',
      `context.data_source is missing; send one of ${DATA_SOURCE_LIST} so destinations can tell where the event came from`);
  } else if (typeof source === 'string' && !DATA_SOURCES.has(source.toLowerCase())) {
    warn(rc, 'context.data_source', 'UNKNOWN_VALUE',
      `context.data_source ${quote(source)} is not one of the documented values (${DATA_SOURCE_LIST}); ` +
      'it is accepted as sent, which is right when it names the marketplace (the payload reference allows the ' +
      'marketplace name in place of "marketplace"), otherwise check the spelling');
  }
}

/** `overide_ip` is the documented spelling; the correctly spelled `override_ip` is read too. */
function readOverrideIp(c: JsonObject, rc: RuleContext): void {
  if (c.override_ip === undefined) return;
  if (c.overide_ip === undefined) {
    c.overide_ip = c.override_ip;
    warn(rc, 'context.override_ip', 'FIELD_RENAMED',
      'context.override_ip was read as context.overide_ip, the documented spelling; send overide_ip');
  } else {
    warn(rc, 'context.override_ip', 'FIELD_RENAMED',
      'context.override_ip was ignored because context.overide_ip (the documented spelling) is also given');
  }
  delete c.override_ip;
}

function fallBackToHost(c: JsonObject, rc: RuleContext): void {
  const host = rc.account.host;
  if (host) {
    c.url = host;
    warn(rc, 'context.url', 'URL_FALLBACK',
      `context.url is missing; the account's host ${host} is used as the page URL (send context.url from single-page applications)`);
  } else {
    warn(rc, 'context.url', 'URL_FALLBACK',
      'context.url is missing and the account has no host configured to fall back to, so the event carries no page URL');
  }
}
