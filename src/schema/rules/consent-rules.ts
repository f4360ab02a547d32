// Consent never refuses an event: the spec says a consent object not in the three-boolean
// format is replaced with all three true. A valid object with extra members keeps its three
// values (an explicit refusal must not turn into a grant); the extras are ignored, with a warning.
import { ajv } from '../ajv.ts';
import { consentFormatSchema } from '../object-schemas.ts';
import type { Consent } from '../types.ts';
import { warn, type RuleContext } from './rule-context.ts';

const isConsentFormat = ajv.compile<Consent>(consentFormatSchema);
const CONSENT_KEYS: ReadonlySet<string> = new Set(['analytics', 'personalization', 'marketing']);

export function resolveConsent(raw: unknown, rc: RuleContext): Consent {
  if (isConsentFormat(raw)) {
    for (const key of Object.keys(raw)) {
      if (!CONSENT_KEYS.has(key)) {
        warn(rc, `consent.${key}`, 'UNDEFINED_FIELD',
          `consent.${key} is not one of analytics, personalization, marketing; it is ignored`);
      }
    }
    return { analytics: raw.analytics, personalization: raw.personalization, marketing: raw.marketing };
  }
  warn(rc, 'consent', 'CONSENT_REPLACED',
    raw === undefined || raw === null
      ? 'consent is missing, so analytics, personalization and marketing are all assumed granted (true); send consent to respect a refusal'
      : 'consent must be an object with three booleans (analytics, personalization, marketing); it was replaced with all three true');
  return { analytics: true, personalization: true, marketing: true };
}
