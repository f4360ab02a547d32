// Rule-by-rule difference of two versions of one rule file, matched by rule id: what a
// publish or rollback would change, shown by `tracklane rules diff` and the admin API.
import { isDeepStrictEqual } from 'node:util';
import type { RuleFile, RuleSpec } from './types.ts';

export interface RuleDiffEntry {
  id: string;
  /** `moved`: the same rule in another place relative to the rules both sides have. */
  change: 'added' | 'removed' | 'changed' | 'moved';
  before?: RuleSpec;
  after?: RuleSpec;
}

/**
 * The rules `after` adds, changes (a changed rule that also moved is `changed`) or moves,
 * in `after`'s order, then the ones it removes in `before`'s order. Null is an absent file.
 * Key order inside a rule is not a change.
 */
export function diffRules(before: RuleFile | null, after: RuleFile | null): RuleDiffEntry[] {
  const b = before?.rules ?? [];
  const a = after?.rules ?? [];
  const beforeById = byId(b);
  const afterById = byId(a);
  const kept = inOrder(b.filter((r) => afterById.has(r.id)).map((r) => r.id), a.filter((r) => beforeById.has(r.id)).map((r) => r.id));
  const out: RuleDiffEntry[] = [];
  for (const r of afterById.values()) {
    const old = beforeById.get(r.id);
    if (old === undefined) out.push({ id: r.id, change: 'added', after: r });
    else if (!isDeepStrictEqual(old, r)) out.push({ id: r.id, change: 'changed', before: old, after: r });
    else if (!kept.has(r.id)) out.push({ id: r.id, change: 'moved', before: old, after: r });
  }
  for (const r of beforeById.values()) if (!afterById.has(r.id)) out.push({ id: r.id, change: 'removed', before: r });
  return out;
}

/** First rule per id, in file order. */
function byId(rules: readonly RuleSpec[]): Map<string, RuleSpec> {
  const m = new Map<string, RuleSpec>();
  for (const r of rules) if (!m.has(r.id)) m.set(r.id, r);
  return m;
}

/** The ids of a longest common subsequence of `x` and `y`: those that kept their relative order. */
function inOrder(x: readonly string[], y: readonly string[]): Set<string> {
  const len = Array.from({ length: x.length + 1 }, () => new Array<number>(y.length + 1).fill(0));
  for (let i = x.length - 1; i >= 0; i--) {
    for (let j = y.length - 1; j >= 0; j--) {
      len[i][j] = x[i] === y[j] ? len[i + 1][j + 1] + 1 : Math.max(len[i + 1][j], len[i][j + 1]);
    }
  }
  const keep = new Set<string>();
  for (let i = 0, j = 0; i < x.length && j < y.length;) {
    if (x[i] === y[j]) {
      keep.add(x[i]);
      i++;
      j++;
    } else if (len[i + 1][j] >= len[i][j + 1]) i++;
    else j++;
  }
  return keep;
}
