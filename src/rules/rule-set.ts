// An immutable, validated set of rule files and the per-account view of it: an account's
// file replaces default rules by id, disables them, or adds new ones, and only for that account.
// A set loaded from rules broken since start also names the scopes it holds (rule-holds.ts).
import { holdFor, type HeldScope } from './rule-holds.ts';
import type { RuleSpec } from './types.ts';

/** One validated rule file. */
export interface LoadedRuleFile {
  /** Path as shown in messages (relative to the working directory when inside it), or `version 12 (default/ga4)`. */
  readonly file: string;
  /** The store version this comes from (see rule-versions.ts); absent for a file. */
  readonly version?: number;
  readonly destination: string;
  /** Null for a default file, the account's script id for `accounts/<SCRIPT_ID>/…`. */
  readonly scriptId: string | null;
  /** The rules in file order, without the disabling entries. */
  readonly rules: readonly RuleSpec[];
  /** Ids this file switches off (`{"id": …, "disabled": true}`). */
  readonly disabled: readonly string[];
}

export interface RuleSet {
  readonly dir: string;
  readonly files: readonly LoadedRuleFile[];
  /** Rule entries across all files, disabling entries included. */
  readonly ruleCount: number;
  /**
   * The rules that apply to one account and destination type: the defaults in file order,
   * each replaced in place or dropped as the account's file says, then the account's new
   * rules in its file order. The same frozen array for the same arguments.
   */
  rulesFor(scriptId: string, destination: string): readonly RuleSpec[];
  /** Destination types with rules (defaults or any account's). */
  destinations(): readonly string[];
  /** Script ids with at least one override file. */
  accounts(): readonly string[];
  /** Scopes whose rules are broken: nothing is mapped for them (delivery holds their events). Empty for a whole set. */
  readonly held: readonly HeldScope[];
  /** The hold covering `scriptId` × `destination`, or null when its rules are loaded. */
  heldFor(scriptId: string, destination: string): HeldScope | null;
}

const NONE: readonly RuleSpec[] = Object.freeze([]);

/** Builds the set; `files` must already be validated (see load-rules.ts). `held`: the scopes left out as broken. */
export function createRuleSet(dir: string, files: readonly LoadedRuleFile[], held: readonly HeldScope[] = []): RuleSet {
  const defaults = new Map<string, readonly RuleSpec[]>();
  const perAccount = new Map<string, readonly RuleSpec[]>();
  for (const f of files) {
    if (f.scriptId === null) defaults.set(f.destination, f.rules);
  }
  for (const f of files) {
    if (f.scriptId !== null) perAccount.set(key(f.scriptId, f.destination), merge(defaults.get(f.destination) ?? NONE, f));
  }
  const destinations = Object.freeze([...new Set(files.map((f) => f.destination))].sort());
  const accounts = Object.freeze([...new Set(files.flatMap((f) => (f.scriptId === null ? [] : [f.scriptId])))].sort());
  const ruleCount = files.reduce((n, f) => n + f.rules.length + f.disabled.length, 0);
  return Object.freeze({
    dir,
    files: Object.freeze([...files]),
    ruleCount,
    rulesFor: (scriptId: string, destination: string) =>
      perAccount.get(key(scriptId, destination)) ?? defaults.get(destination) ?? NONE,
    destinations: () => destinations,
    accounts: () => accounts,
    held: Object.freeze([...held]),
    heldFor: (scriptId: string, destination: string) => (held.length === 0 ? null : holdFor(held, scriptId, destination)),
  });
}

const key = (scriptId: string, destination: string) => `${scriptId}\0${destination}`;

function merge(defaults: readonly RuleSpec[], override: LoadedRuleFile): readonly RuleSpec[] {
  const byId = new Map(override.rules.map((r) => [r.id, r]));
  const off = new Set(override.disabled);
  const out: RuleSpec[] = [];
  for (const d of defaults) {
    if (off.has(d.id)) continue;
    out.push(byId.get(d.id) ?? d);
  }
  const defaultIds = new Set(defaults.map((d) => d.id));
  for (const r of override.rules) if (!defaultIds.has(r.id)) out.push(r);
  return Object.freeze(out);
}
