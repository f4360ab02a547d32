// A mapping-rule document as files, the store's versions and the admin API carry it: the
// rule file `{destination, rules}` and its rules. Rule files are JSON under RULES_DIR (and
// each plugin's rules.json), loaded at runtime and hot-reloaded; each rule turns one
// standard event into one native event. Evaluation lives in src/rules/.

/** A json-logic expression, or a literal (strings, numbers, booleans, null, arrays). */
export type JsonLogic = unknown;

/**
 * One rule. File layout under RULES_DIR:
 * - `<destination>.json` — the default rules for a destination type (e.g. `ga4.json`);
 * - `accounts/<SCRIPT_ID>/<destination>.json` — that account's overrides: a rule with the
 *   id of a default rule replaces it, `disabled: true` switches it off, a new id adds one.
 */
export interface RuleSpec {
  /** Unique within the destination type, e.g. `ga4.purchase`. */
  id: string;
  /** The standard event name(s) it applies to; `*` for any. */
  event: string | string[];
  /** Optional json-logic condition over the RuleData; the rule applies when truthy. */
  when?: JsonLogic;
  /** Only in account files: switch off the default rule with this id. */
  disabled?: boolean;
  /** Short human description, shown by `rules preview`. */
  description?: string;
  /**
   * The native event, as flat dot-path keys → json-logic expressions:
   * `{"name": "purchase", "params.transaction_id": {"var": "event.id"}}` builds
   * `{name: "purchase", params: {transaction_id: "…"}}`. Keys whose value evaluates to
   * null or undefined are left out. Arrays of objects are built with json-logic's `map`
   * and the custom `object` operation, whose argument is a flat list of key/value pairs
   * (keys may be dot paths): `{"map": [{"var": "products"}, {"object": ["item_id", {"var": "id"}, "price", {"var": "price"}]}]}`.
   */
  output: Record<string, JsonLogic>;
}

export interface RuleFile {
  /** The destination type (plugin name) these rules are for; must match the file name. */
  destination: string;
  rules: RuleSpec[];
}

/** One native event a rule produced. */
export interface NativeEvent {
  ruleId: string;
  fields: Record<string, unknown>;
}
