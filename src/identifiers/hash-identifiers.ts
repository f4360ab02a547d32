// Runs a destination's identifier table over one user: read, normalise (in the forms the
// destination declares), hash, collect. Pure: the same input always gives the same output.
import { resolveCountry } from './country.ts';
import { NORMALISERS } from './normalisers.ts';
import { isSha256Hex, sha256Hex } from './sha256.ts';
import type { IdentifierRule, IdentifierSpec } from './spec.ts';
import type { IdentifierUser, NormaliseContext, NormalMemo, PipelineWarning, UserField } from './types.ts';

export type { NormalMemo } from './types.ts';

export interface HashIdentifiersOptions {
  /** The account's default country (alpha-2), for phone numbers written nationally. */
  defaultCountry?: string;
  /**
   * Normalised (and hashed) values already computed for other destinations of the same
   * batch: one user → one normalisation and one hash per normal form, whichever
   * destinations want it (createNormalMemo()).
   */
  memo?: NormalMemo;
}

/** A memo for one batch; entries are only ever reused within it. */
export const createNormalMemo = (): NormalMemo => new Map();

export interface HashedIdentifiers {
  /**
   * Native dot path → value: a string, or an array when several distinct values survived
   * (e.g. two e-mails). Absent fields are left out, never sent empty.
   */
  fields: Record<string, string | string[]>;
  /** Values that were present but could not be sent; messages never quote the value. */
  warnings: PipelineWarning[];
}

/**
 * Normalises and hashes a user's identifiers as a destination's spec says. A value that
 * already is a SHA-256 digest is passed through lowercased (never hashed twice) where the
 * field is hashed, and dropped with a warning where it is sent plain.
 *
 * @example
 * hashIdentifiers({ email: ' John.Doe@gmail.com ', phone: '0722 123 456', country: 'Romania' },
 *                 metaCapi.identifiers, { defaultCountry: 'RO' })
 * // → { fields: { 'user_data.em': sha256('john.doe@gmail.com'),
 * //               'user_data.ph': sha256('40722123456'),
 * //               'user_data.country': sha256('ro') },
 * //     warnings: [] }
 */
export function hashIdentifiers(
  user: IdentifierUser | undefined | null,
  spec: IdentifierSpec,
  opts: HashIdentifiersOptions = {},
): HashedIdentifiers {
  const fields: Record<string, string | string[]> = {};
  const warnings: PipelineWarning[] = [];
  if (user == null) return { fields, warnings };

  const ctx: NormaliseContext = { forms: spec.forms ?? {}, defaultCountry: opts.defaultCountry, country: userCountry(user), shared: opts.memo };

  // Per value and per target this runs for every destination of every event: no arrays or
  // strings are made for the common case of one value (warning texts only when warning).
  const table = spec.table;
  for (const target in table) {
    if (!Object.hasOwn(table, target)) continue;
    const rule = table[target];
    const source = sourceOf(user, rule);
    if (source === undefined) continue;
    const raw = user[source];
    if (!Array.isArray(raw)) {
      const value = normaliseOne(usable(raw)!, rule, ctx, source, target, warnings);
      if (value !== null) fields[target] = value;
      continue;
    }
    const max = rule.max ?? 1;
    const out: string[] = [];
    for (let i = 0; i < raw.length && out.length < max; i++) {
      const s = usable(raw[i]);
      if (s === undefined) continue;
      const value = normaliseOne(s, rule, ctx, source, target, warnings);
      if (value !== null && !out.includes(value)) out.push(value);
    }
    if (out.length > 0) fields[target] = out.length === 1 ? out[0] : out;
  }
  return { fields, warnings };
}

function normaliseOne(
  raw: string,
  rule: IdentifierRule,
  ctx: NormaliseContext,
  source: UserField,
  target: string,
  warnings: PipelineWarning[],
): string | null {
  if (isSha256Hex(raw)) {
    if (rule.hash) return raw.trim().toLowerCase();
    const field = `user.${source}`;
    warnings.push({
      field,
      code: 'IDENTIFIER_HASHED_NOT_SENDABLE',
      message: `${field} is a SHA-256 hash but ${target} is sent in plain text; omitted`,
    });
    return null;
  }
  const memo = ctx.shared;
  const key = memo === undefined ? '' : memoKey(raw, rule, ctx);
  let value = memo?.get(key);
  if (value === undefined) {
    const normalised = NORMALISERS[rule.normalise](raw, ctx);
    value = normalised === null ? null : rule.hash ? hashOnce(normalised, memo) : normalised;
    memo?.set(key, value);
  }
  if (value === null) {
    const field = `user.${source}`;
    warnings.push({
      field,
      code: 'IDENTIFIER_INVALID',
      message: `${field} is not a usable ${rule.normalise} for ${target}; omitted`,
    });
    return null;
  }
  return value;
}

/**
 * SHA-256 of a normalised value, once per memo: two destinations whose forms differ (a form
 * that drops gmail dots, one that does not) mostly normalise a value to the same text.
 */
function hashOnce(normalised: string, memo: NormalMemo | undefined): string {
  if (memo === undefined) return sha256Hex(normalised);
  const key = `sha256\u0000${normalised}`;
  let hex = memo.get(key);
  if (hex == null) memo.set(key, (hex = sha256Hex(normalised)));
  return hex;
}

/** What a normalised value depends on: the normaliser and its form, the countries, hashing, the raw value. */
function memoKey(raw: string, rule: IdentifierRule, ctx: NormaliseContext): string {
  return `${rule.normalise}\u0000${formOf(ctx.forms, rule.normalise)}\u0000${ctx.defaultCountry ?? ''}\u0000${ctx.country ?? ''}\u0000${rule.hash ? 1 : 0}\u0000${raw}`;
}

/** A destination's form for one normaliser, as text (computed once per forms object). */
function formOf(forms: NormaliseContext['forms'], name: string): string {
  let byName = formText.get(forms);
  if (byName === undefined) formText.set(forms, (byName = new Map()));
  let text = byName.get(name);
  if (text === undefined) byName.set(name, (text = JSON.stringify((forms as Record<string, unknown>)[name] ?? null)));
  return text;
}

const formText = new WeakMap<object, Map<string, string>>();

/** The first of the rule's source fields that holds a usable value (undefined: none does). */
function sourceOf(user: IdentifierUser, rule: IdentifierRule): UserField | undefined {
  const from = rule.from;
  if (typeof from === 'string') return hasUsable(user[from]) ? (from as UserField) : undefined;
  for (let i = 0; i < from.length; i++) if (hasUsable(user[from[i]])) return from[i];
  return undefined;
}

function hasUsable(raw: unknown): boolean {
  if (!Array.isArray(raw)) return usable(raw) !== undefined;
  for (let i = 0; i < raw.length; i++) if (usable(raw[i]) !== undefined) return true;
  return false;
}

/** A string that is not blank, or a finite number as text; anything else is not a usable value. */
function usable(v: unknown): string | undefined {
  if (typeof v === 'string') return v.trim() === '' ? undefined : v;
  return typeof v === 'number' && Number.isFinite(v) ? String(v) : undefined;
}

/** The user's own country, the first of their values that resolves to an alpha-2 code. */
function userCountry(user: IdentifierUser): string | undefined {
  const raw = user.country;
  if (!Array.isArray(raw)) {
    const s = usable(raw);
    return s === undefined ? undefined : resolveCountry(s) ?? undefined;
  }
  for (let i = 0; i < raw.length; i++) {
    const s = usable(raw[i]);
    const c = s === undefined ? null : resolveCountry(s);
    if (c !== null) return c;
  }
  return undefined;
}
