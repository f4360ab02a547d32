// Everything the schema tests (and the HTTP integration test) send: valid payloads, invalid
// cases with the error each must produce, and accepted edge cases with their warnings.
// Plain data only. Assumed account: the nine spec event names approved; host and tax rate any.
export * from './payloads.ts';
export * from './invalid-cases.ts';
export * from './warning-cases.ts';
