// Migration 12: an account's consent default, how an event without a valid consent object
// is read for it: 'granted' (the spec's rule, and every existing account's) or 'denied'.
export default `
  ALTER TABLE accounts ADD COLUMN consent_default TEXT NOT NULL DEFAULT 'granted'
    CHECK (consent_default IN ('granted', 'denied'));
`;
