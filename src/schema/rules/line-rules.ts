// Shipping and payment lines: the schema checks them fully; normalising only drops nulls and
// upper-cases a nested currency.
import { dropNulls, isRecord, upperCaseCurrency } from '../guards.ts';

const LINE_MEMBERS = ['name', 'value', 'tax_included', 'tax_percent', 'id', 'type', 'currency', 'exchange_rate'] as const;

/** The array normalised in place, or [] when absent. */
export function normaliseLines<T>(raw: unknown): T[] {
  if (!Array.isArray(raw)) return [];
  for (const line of raw as unknown[]) {
    if (!isRecord(line)) continue;
    dropNulls(line, LINE_MEMBERS);
    upperCaseCurrency(line);
  }
  return raw as T[];
}
