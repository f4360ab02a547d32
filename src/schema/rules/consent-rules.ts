// Consent never refuses an event, and a refusal is never turned into a grant.
// - Three booleans (extra members ignored, with a warning): kept as given.
// - Absent or null: all three granted, with a warning (nothing was refused), or all three
//   refused for an account whose consent default is `denied`.
// - `false`: all three refused. Any other non-object (a string, an array): as absent, with
//   a warning, since it holds no readable refusal.
// - An object in another shape: each member is read on its own ("false", "no", "denied",
//   0 count as a refusal; "true", "yes", "granted", 1 as a grant). A member that is missing
//   or unreadable takes the account's default only when no member is refused; if any member
//   is refused, the unreadable ones are refused too. Every such repair is a CONSENT_REPLACED warning.
import { compilePayloadSchema } from '../ajv.ts';
import { consentFormatSchema } from '../object-schemas.ts';
import { isRecord } from '../guards.ts';
import type { Consent } from '../types.ts';
import { warn, type RuleContext } from './rule-context.ts';

const isConsentFormat = compilePayloadSchema<Consent>(consentFormatSchema);
const CONSENT_KEYS = ['analytics', 'personalization', 'marketing'] as const;
const KNOWN_KEYS: ReadonlySet<string> = new Set(CONSENT_KEYS);
const REFUSALS: ReadonlySet<unknown> = new Set([false, 0, 'false', 'no', 'denied', '0']);
const GRANTS: ReadonlySet<unknown> = new Set([true, 1, 'true', 'yes', 'granted', '1']);

/** true / false for a readable value, undefined for a missing or unreadable one. */
function readValue(v: unknown): boolean | undefined {
  const key = typeof v === 'string' ? v.trim().toLowerCase() : v;
  if (REFUSALS.has(key)) return false;
  if (GRANTS.has(key)) return true;
  return undefined;
}

export function resolveConsent(raw: unknown, rc: RuleContext): Consent {
  if (isConsentFormat(raw)) {
    for (const key of Object.keys(raw)) {
      if (!KNOWN_KEYS.has(key)) {
        warn(rc, `consent.${key}`, 'UNDEFINED_FIELD',
          `consent.${key} is not one of analytics, personalization, marketing; it is ignored`);
      }
    }
    return { analytics: raw.analytics, personalization: raw.personalization, marketing: raw.marketing };
  }
  const granted = rc.account.consentDefault !== 'denied';
  if (raw === undefined || raw === null) {
    warn(rc, 'consent', 'CONSENT_REPLACED', granted
      ? 'consent is missing, so analytics, personalization and marketing are all assumed granted (true); send consent to respect a refusal'
      : 'consent is missing, so analytics, personalization and marketing are all refused (false): this account\'s consent default is denied');
    return { analytics: granted, personalization: granted, marketing: granted };
  }
  if (raw === false) {
    warn(rc, 'consent', 'CONSENT_REPLACED',
      'consent must be an object with three booleans (analytics, personalization, marketing); false was read as all three refused');
    return { analytics: false, personalization: false, marketing: false };
  }
  if (!isRecord(raw)) {
    warn(rc, 'consent', 'CONSENT_REPLACED',
      `consent must be an object with three booleans (analytics, personalization, marketing); it was replaced with all three ${granted}` +
      (granted ? '' : ' (this account\'s consent default is denied)'));
    return { analytics: granted, personalization: granted, marketing: granted };
  }
  return repairObject(raw, rc, granted);
}

function repairObject(raw: Record<string, unknown>, rc: RuleContext, granted: boolean): Consent {
  const read = CONSENT_KEYS.map((k) => readValue(raw[k]));
  const anyRefused = read.includes(false);
  const fallback = !anyRefused && granted;
  const [analytics, personalization, marketing] = read.map((v) => v ?? fallback);
  const consent: Consent = { analytics, personalization, marketing };
  const unreadable = CONSENT_KEYS.filter((_, i) => read[i] === undefined);
  const readAsBoolean = CONSENT_KEYS.filter((k, i) => read[i] !== undefined && typeof raw[k] !== 'boolean');
  const parts: string[] = [];
  if (readAsBoolean.length > 0) parts.push(`${readAsBoolean.map((k) => `consent.${k}`).join(', ')} read as ${readAsBoolean.map((k) => consent[k]).join(', ')}`);
  if (unreadable.length > 0) {
    parts.push(`${unreadable.map((k) => `consent.${k}`).join(', ')} ${unreadable.length === 1 ? 'is' : 'are'} missing or not a boolean, so ` +
      (anyRefused ? 'refused (false), because another member is refused'
        : granted ? 'assumed granted (true)' : 'refused (false), this account\'s consent default'));
  }
  warn(rc, 'consent', 'CONSENT_REPLACED',
    `consent must be an object with three booleans (analytics, personalization, marketing); ${parts.join('; ')}`);
  return consent;
}
