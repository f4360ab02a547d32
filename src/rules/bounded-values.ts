// Texts and JSON that rule operations build, built only within MAX_VALUE_CHARS and charged
// to the evaluation running now (work-meter.ts): json-logic's String() of arrays for `cat`
// and `substr`, JSON.stringify for `to_string`, and the size check of a native event.
import { chargeText, MAX_VALUE_CHARS, spend, tooLarge } from './work-meter.ts';

/**
 * String(value) as json-logic's `cat` and `substr` make it (arrays joined with commas, null
 * and undefined inside them empty, objects `[object Object]`), built only while it stays
 * within `limit` characters: past it, RuleValueTooLargeError before the rest is walked.
 * Charges the elements walked; the caller charges for the text (chargeText), once.
 */
export function boundedText(value: unknown, limit: number = MAX_VALUE_CHARS): string {
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) return String(value);
  // Most arrays are far from the cap: an upper bound on their text from one walk, then
  // the engine's own join. Only one that may pass the cap is built piece by piece.
  const estimate = textUpperBound(value, limit);
  if (estimate >= 0) return String(value);
  const join = (list: readonly unknown[], depth: number): string => {
    if (depth > 64) throw new Error('the value is nested too deeply');
    spend(list.length);
    let out = '';
    for (let i = 0; i < list.length; i++) {
      const v = list[i];
      out += `${i > 0 ? ',' : ''}${v == null ? '' : Array.isArray(v) ? join(v, depth + 1) : String(v)}`;
      if (out.length > limit) tooLarge('the text');
    }
    return out;
  };
  return join(value, 0);
}

/** Characters of a number or boolean as text, at most. */
const SCALAR_TEXT = 24;

/**
 * An upper bound on String(value)'s length for an array (charging one step per element
 * walked), or -1 once it passes `limit` (the text may still fit: build it exactly).
 */
function textUpperBound(list: readonly unknown[], limit: number, depth = 0): number {
  if (depth > 64) throw new Error('the value is nested too deeply');
  spend(list.length);
  let n = list.length;
  for (let i = 0; i < list.length && n <= limit; i++) {
    const v = list[i];
    if (typeof v === 'string') n += v.length;
    else if (Array.isArray(v)) {
      const inner = textUpperBound(v, limit - n, depth + 1);
      if (inner < 0) return -1;
      n += inner;
    } else n += SCALAR_TEXT;
  }
  return n <= limit ? n : -1;
}

/**
 * A bound on JSON.stringify(value)'s length before its strings are escaped (charging one
 * step per value walked), or -1 once it passes MAX_VALUE_CHARS.
 */
function jsonUpperBound(value: unknown): number {
  let n = 0;
  const walk = (v: unknown, depth: number): boolean => {
    if (depth > 64) throw new Error('to_string: the value is nested too deeply');
    if (typeof v === 'string') n += v.length + 2;
    else if (v === null || typeof v !== 'object') n += SCALAR_TEXT;
    else if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return false;
    else if (Array.isArray(v)) {
      spend(v.length);
      n += 1 + v.length;
      for (let i = 0; i < v.length; i++) if (n > MAX_VALUE_CHARS || !walk(v[i], depth + 1)) return false;
    } else {
      n += 1;
      for (const k in v) {
        if (!Object.hasOwn(v, k)) continue;
        spend(1);
        n += k.length + 4;
        if (n > MAX_VALUE_CHARS || !walk((v as Record<string, unknown>)[k], depth + 1)) return false;
      }
    }
    return n <= MAX_VALUE_CHARS;
  };
  return walk(value, 0) ? n : -1;
}

/**
 * JSON.stringify(value) for JSON data, built only while it stays within MAX_VALUE_CHARS:
 * past it, RuleValueTooLargeError before the rest is walked. Charges the characters built
 * and one step per value walked.
 */
export function boundedJson(value: unknown): string | undefined {
  // Most values are far from the cap: one walk bounds their text, then the engine's own
  // serialiser (escaping may lengthen it: checked after). Only a value that may pass the
  // cap is built piece by piece, and stopped there.
  if (jsonUpperBound(value) >= 0) {
    const out = JSON.stringify(value) as string | undefined;
    if (out !== undefined) chargeText(out.length, 'the JSON text');
    return out;
  }
  const parts: string[] = [];
  let length = 0;
  let nodes = 0;
  /** Past the cap: charge what was walked and built, then fail. */
  const over = (chars: number): never => {
    spend(nodes);
    chargeText(chars, 'the JSON text');
    return tooLarge('the JSON text');
  };
  const push = (s: string) => {
    length += s.length;
    if (length > MAX_VALUE_CHARS) over(length);
    parts.push(s);
  };
  const walk = (v: unknown, depth: number): boolean => {
    nodes++;
    if (depth > 64) throw new Error('to_string: the value is nested too deeply');
    if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
      v = (v as { toJSON(): unknown }).toJSON();
    }
    switch (typeof v) {
      case 'string':
        if (length + v.length + 2 > MAX_VALUE_CHARS) over(length + v.length + 2); // before escaping it
        push(JSON.stringify(v));
        return true;
      case 'number':
        push(Number.isFinite(v) ? String(v) : 'null');
        return true;
      case 'boolean':
        push(v ? 'true' : 'false');
        return true;
      case 'object':
        break;
      default:
        return false; // undefined, functions, symbols: left out (null in an array)
    }
    if (v === null) {
      push('null');
      return true;
    }
    if (Array.isArray(v)) {
      push('[');
      for (let i = 0; i < v.length; i++) {
        if (i > 0) push(',');
        if (!walk(v[i], depth + 1)) push('null');
      }
      push(']');
      return true;
    }
    push('{');
    let first = true;
    for (const key in v) {
      if (!Object.hasOwn(v, key)) continue;
      const mark = parts.length;
      const before = length;
      push(`${first ? '' : ','}${JSON.stringify(key)}:`);
      if (walk((v as Record<string, unknown>)[key], depth + 1)) {
        first = false;
      } else {
        parts.length = mark;
        length = before;
      }
    }
    push('}');
    return true;
  };
  if (!walk(value, 0)) return undefined;
  spend(nodes);
  chargeText(length, 'the JSON text');
  return parts.join('');
}

/**
 * Whether `value`'s JSON text stays within `limit` characters (escapes not counted), walking
 * no further than that: what a native event's size is checked with.
 */
export function jsonFitsWithin(value: unknown, limit: number): boolean {
  return jsonLengthWithin(value, 0, limit, 0) >= 0;
}

/** `length` plus the JSON length of `v`, or -1 once past `limit` (a plain recursive function: no closure per call). */
function jsonLengthWithin(v: unknown, length: number, limit: number, depth: number): number {
  if (depth > 64) return -1;
  if (typeof v === 'string') length += v.length + 2;
  else if (v === null || typeof v !== 'object') length += 8;
  else if (Array.isArray(v)) {
    length += 1 + v.length;
    for (let i = 0; i < v.length && length >= 0 && length <= limit; i++) length = jsonLengthWithin(v[i], length, limit, depth + 1);
  } else {
    length += 1;
    for (const k in v) {
      if (!Object.hasOwn(v, k)) continue;
      length = jsonLengthWithin((v as Record<string, unknown>)[k], length + k.length + 4, limit, depth + 1);
      if (length < 0 || length > limit) return -1;
    }
  }
  return length >= 0 && length <= limit ? length : -1;
}
