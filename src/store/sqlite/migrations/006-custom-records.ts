// Migration 6: records of custom endpoints that are not standard events. A record with a
// key replaces the stored one with the same (account, endpoint, type, key): retries are harmless.
export default `
  CREATE TABLE custom_records (
    seq          INTEGER PRIMARY KEY,
    script_id    TEXT NOT NULL,
    customer     TEXT NOT NULL,
    endpoint     TEXT NOT NULL,
    type         TEXT NOT NULL,
    record_key   TEXT,
    request_id   TEXT NOT NULL,
    received_at  INTEGER NOT NULL,
    data         TEXT NOT NULL
  ) STRICT;
  CREATE UNIQUE INDEX custom_records_key ON custom_records(script_id, endpoint, type, record_key) WHERE record_key IS NOT NULL;
  CREATE INDEX custom_records_account ON custom_records(script_id, seq);
  CREATE INDEX custom_records_age ON custom_records(received_at);
`;
