// GA4's documented collection limits, applied before sending: GA4 accepts an over-long
// value and silently drops it (or the whole parameter), so the request is trimmed here and
// test mode says what was cut.
//   event name ≤ 40 characters; ≤ 25 parameters per event; parameter names ≤ 40;
//   parameter values ≤ 100 characters (page_title 300, page_referrer 420,
//   page_location 1,000); ≤ 200 items per event, their string values ≤ 100;
//   user_id ≤ 256; user property names ≤ 24, values ≤ 36, at most 25 of them.
// Strings are cut by characters (code points), never inside a surrogate pair. A value that
// is an identifier (user_id) is dropped rather than cut: a shortened id is someone else's.

type Json = Record<string, unknown>;

export const GA4_LIMITS = {
  eventName: 40,
  params: 25,
  paramName: 40,
  paramValue: 100,
  items: 200,
  userId: 256,
  userProperties: 25,
  userPropertyName: 24,
  userPropertyValue: 36,
} as const;

const LONGER_PARAMS: Readonly<Record<string, number>> = { page_title: 300, page_referrer: 420, page_location: 1000 };

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `s` cut to `max` characters (code points). */
export function cut(s: string, max: number): string {
  if (s.length <= max) return s;
  const chars = Array.from(s);
  return chars.length <= max ? s : chars.slice(0, max).join('');
}
const tooLong = (s: string, max: number) => s.length > max && Array.from(s).length > max;

/** One event within the limits, and what was changed (sentences without the values). */
export function limitEvent(event: Json): { event: Json; warnings: string[] } {
  const warnings: string[] = [];
  const out: Json = { ...event };
  if (typeof out.name === 'string' && tooLong(out.name, GA4_LIMITS.eventName)) {
    out.name = cut(out.name, GA4_LIMITS.eventName);
    warnings.push(`event name longer than ${GA4_LIMITS.eventName} characters was cut`);
  }
  if (isObject(out.params)) {
    const params: Json = {};
    const names = Object.keys(out.params);
    for (const name of names) {
      const value = out.params[name];
      if (tooLong(name, GA4_LIMITS.paramName)) {
        warnings.push(`parameter ${cut(name, GA4_LIMITS.paramName)}… has a name longer than ${GA4_LIMITS.paramName} characters and was dropped`);
        continue;
      }
      if (Object.keys(params).length >= GA4_LIMITS.params) {
        warnings.push(`more than ${GA4_LIMITS.params} parameters: ${name} and the ones after it were dropped`);
        break;
      }
      if (name === 'items' && Array.isArray(value)) params.items = limitItems(value, warnings);
      else if (typeof value === 'string' && tooLong(value, LONGER_PARAMS[name] ?? GA4_LIMITS.paramValue)) {
        const max = LONGER_PARAMS[name] ?? GA4_LIMITS.paramValue;
        params[name] = cut(value, max);
        warnings.push(`parameter ${name} was longer than ${max} characters and was cut`);
      } else params[name] = value;
    }
    out.params = params;
  }
  return { event: out, warnings };
}

function limitItems(items: unknown[], warnings: string[]): unknown[] {
  let kept = items;
  if (items.length > GA4_LIMITS.items) {
    kept = items.slice(0, GA4_LIMITS.items);
    warnings.push(`more than ${GA4_LIMITS.items} items: only the first ${GA4_LIMITS.items} were sent`);
  }
  const cutFields = new Set<string>();
  const result = kept.map((item) => {
    if (!isObject(item)) return item;
    const copy: Json = {};
    for (const [k, v] of Object.entries(item)) {
      if (typeof v === 'string' && tooLong(v, GA4_LIMITS.paramValue)) {
        copy[k] = cut(v, GA4_LIMITS.paramValue);
        cutFields.add(k);
      } else copy[k] = v;
    }
    return copy;
  });
  for (const k of cutFields) warnings.push(`items[].${k} was longer than ${GA4_LIMITS.paramValue} characters and was cut`);
  return result;
}

/** The request-level user_id and user_properties within the limits. */
export function limitEnvelope(head: Json): { head: Json; warnings: string[] } {
  const warnings: string[] = [];
  const out: Json = { ...head };
  if (typeof out.user_id === 'string' && tooLong(out.user_id, GA4_LIMITS.userId)) {
    delete out.user_id;
    warnings.push(`user_id longer than ${GA4_LIMITS.userId} characters was left out (a shortened id would name someone else)`);
  }
  if (isObject(out.user_properties)) {
    const props: Json = {};
    for (const [name, value] of Object.entries(out.user_properties)) {
      if (tooLong(name, GA4_LIMITS.userPropertyName) || Object.keys(props).length >= GA4_LIMITS.userProperties) {
        warnings.push(`user property ${cut(name, GA4_LIMITS.userPropertyName)} was dropped (name over ${GA4_LIMITS.userPropertyName} characters, or more than ${GA4_LIMITS.userProperties} properties)`);
        continue;
      }
      const v = isObject(value) ? value.value : undefined;
      if (typeof v === 'string' && tooLong(v, GA4_LIMITS.userPropertyValue)) {
        props[name] = { ...value as Json, value: cut(v, GA4_LIMITS.userPropertyValue) };
        warnings.push(`user property ${name} was longer than ${GA4_LIMITS.userPropertyValue} characters and was cut`);
      } else props[name] = value;
    }
    out.user_properties = props;
  }
  return { head: out, warnings };
}
