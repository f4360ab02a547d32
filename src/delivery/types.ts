// Delivery's types: the store contract it works through (kept beside the store, in
// src/store/delivery-contract.ts) and what delivery itself adds.
export * from '../store/delivery-contract.ts';

/** What delivery logs through (a pino logger fits). */
export interface LaneLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}
