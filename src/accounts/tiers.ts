// Plan tiers and what each unlocks. Endpoints 1–3 need the add-on on FLEX or
// above; custom endpoints need CUSTOM.
import { TIERS, type Account, type Tier } from './types.ts';

export const tierRank = (t: Tier): number => TIERS.indexOf(t);
export const isTier = (s: string): s is Tier => (TIERS as readonly string[]).includes(s);

/** Whether the account may use the standard and test intake endpoints. */
export function canUseStandardIntake(a: Account): boolean {
  return a.enabled && a.addon && tierRank(a.tier) >= tierRank('FLEX');
}

/** Whether the account's plan includes custom endpoints. */
export function canUseCustomEndpoints(a: Account): boolean {
  return a.enabled && a.tier === 'CUSTOM';
}
