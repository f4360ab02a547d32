// Migration 10: an event whose rules are held for some of its destinations (broken rules
// since start, src/rules/rule-holds.ts) stays in the dispatch queue for those only, once
// its other destinations' deliveries are stored: held_for lists the destination ids it
// still owes (NULL: every destination of its account).
export default `
  ALTER TABLE dispatch_queue ADD COLUMN held_for TEXT;
`;
