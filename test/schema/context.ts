// The account context the validator tests run with: the nine spec events approved, a
// default tax rate and a host, any of which a test may override.
import { SPEC_EVENT_NAMES } from '../../src/accounts/types.ts';
import type { ValidationContext } from '../../src/schema/types.ts';

export const HOST = 'https://shop.example.com';

export const account = (over: Partial<ValidationContext> = {}): ValidationContext => ({
  approvedEvents: new Set<string>(SPEC_EVENT_NAMES),
  defaultTaxRate: 19,
  host: HOST,
  ...over,
});
