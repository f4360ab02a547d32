// The mapping-rule contract. Rule files are JSON under RULES_DIR, loaded at runtime
// and hot-reloaded; each rule turns one standard event into one native event.

export type { JsonLogic, NativeEvent, RuleFile, RuleSpec } from '../domain/rule-documents.ts';

/**
 * What rules read: the normalised event plus what the pipeline derived. The plugin places
 * the identifiers it sends itself; `user` here has every identifier field hashed unless the
 * destination opted in to plaintext and the event's marketing consent is given.
 */
export interface RuleData {
  event: Record<string, unknown>;
  context: Record<string, unknown>;
  products: Record<string, unknown>[];
  shipping: Record<string, unknown>[];
  payments: Record<string, unknown>[];
  coupons: Record<string, unknown>[];
  user: Record<string, unknown>;
  consent: { analytics: boolean; personalization: boolean; marketing: boolean };
  cookies: { name: string; value: string }[];
  /** Click and browser ids (client_id, session_id, fbp, fbc, gclid, ttclid, ttp, …). */
  attribution: Record<string, unknown>;
  account: { script_id: string; country: string | null; host: string | null };
  /** The destination's settings with secrets removed (e.g. conversion_actions, merchant_id). */
  settings: Record<string, unknown>;
  /** When the event was received, ms since epoch. */
  received_at: number;
}

