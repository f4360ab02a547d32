// Migration 11: custom endpoint versions. An account may be pinned to a version of an
// endpoint (endpoint name → version, JSON); every use of a version is counted per account
// and env, so an operator sees who still sends an old shape before retiring it.
export default `
  ALTER TABLE accounts ADD COLUMN endpoint_pins TEXT NOT NULL DEFAULT '{}';
  CREATE TABLE custom_endpoint_usage (
    script_id     TEXT NOT NULL,
    customer      TEXT NOT NULL,
    endpoint      TEXT NOT NULL,
    version       INTEGER NOT NULL,
    env           TEXT NOT NULL,
    uses          INTEGER NOT NULL,
    first_used_at INTEGER NOT NULL,
    last_used_at  INTEGER NOT NULL,
    PRIMARY KEY (script_id, customer, endpoint, version, env)
  ) STRICT;
`;
