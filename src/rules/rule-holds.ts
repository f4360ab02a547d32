// Held scopes: while the rules have never loaded whole, each broken rule document holds
// delivery for its own scope only (src/rules/README.md, "Broken rules at start"), and
// everything else is delivered with the rules that did load. Which scope a problem holds:
// an account file, that account × destination type; a default file (RULES_DIR's or a
// plugin's), that type for every account (account files are layered on the defaults, so
// none stands without them); a problem of no one file (the folder missing, a misplaced
// file, the store unread), everything.
import type { RuleLoadError } from './rule-files.ts';

export interface HeldScope {
  /** The account held; null for every account. */
  readonly scriptId: string | null;
  /** The destination type held; null for every type (then scriptId is null too). */
  readonly destination: string | null;
  /** The first problem of the document that holds it. */
  readonly error: RuleLoadError;
}

/** The hold, if any, that covers deliveries of `scriptId` to a destination of `type`. */
export function holdFor(held: readonly HeldScope[], scriptId: string, type: string): HeldScope | null {
  for (const h of held) {
    if (h.destination === null) return h;
    if (h.destination === type && (h.scriptId === null || h.scriptId === scriptId)) return h;
  }
  return null;
}

/** How operators read a hold (/readyz, logs): `account AB12CD34 × webhook`, `webhook for every account`. */
export function describeHold(h: Pick<HeldScope, 'scriptId' | 'destination'>): string {
  if (h.destination === null) return 'every destination of every account';
  return h.scriptId === null ? `${h.destination} for every account` : `account ${h.scriptId} × ${h.destination}`;
}
