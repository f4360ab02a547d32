// PostgreSQL migration 1: the schema of the first PostgreSQL version (accounts and their
// tokens, events, seen products and dedup keys, destinations, the dispatch queue, deliveries,
// attempts and their links, destination health, custom records, scheduled-job runs) in one
// statement list. Later versions: migrations.ts.
export default `
  CREATE TABLE accounts (
    script_id    TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    tier         TEXT NOT NULL CHECK (tier IN ('BASIC','FLEX','PRO','CUSTOM')),
    addon        BOOLEAN NOT NULL DEFAULT false,
    enabled      BOOLEAN NOT NULL DEFAULT true,
    host         TEXT,
    country      TEXT,
    tax_rate     DOUBLE PRECISION,
    extra_events TEXT NOT NULL DEFAULT '[]',
    customer     TEXT,
    rate_limit   INTEGER,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL
  );
  CREATE TABLE access_tokens (
    id          BIGSERIAL PRIMARY KEY,
    script_id   TEXT NOT NULL REFERENCES accounts(script_id),
    hash        TEXT NOT NULL,
    prefix      TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT
  );
  CREATE INDEX access_tokens_script ON access_tokens(script_id);
  CREATE TABLE events (
    seq          BIGSERIAL PRIMARY KEY,
    id           TEXT NOT NULL,
    script_id    TEXT NOT NULL,
    name         TEXT,
    event_id     TEXT,
    status       TEXT NOT NULL,
    source       TEXT NOT NULL,
    request_id   TEXT NOT NULL,
    received_at  BIGINT NOT NULL,
    errors       TEXT NOT NULL,
    warnings     TEXT NOT NULL,
    payload      TEXT NOT NULL
  );
  CREATE INDEX events_account ON events(script_id, seq);
  CREATE INDEX events_event_id ON events(event_id) WHERE event_id IS NOT NULL;
  CREATE INDEX events_age ON events(received_at);
  CREATE TABLE destinations (
    id          TEXT PRIMARY KEY,
    script_id   TEXT NOT NULL REFERENCES accounts(script_id),
    type        TEXT NOT NULL,
    name        TEXT NOT NULL,
    enabled     BOOLEAN NOT NULL DEFAULT true,
    settings    TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    removed_at  BIGINT
  );
  CREATE INDEX destinations_account ON destinations(script_id);
  CREATE TABLE seen_products (
    script_id   TEXT NOT NULL,
    product_id  TEXT NOT NULL,
    PRIMARY KEY (script_id, product_id)
  );
  CREATE TABLE dedup_keys (
    script_id     TEXT NOT NULL,
    environment   TEXT NOT NULL CHECK (environment IN ('prod', 'dev')),
    name          TEXT NOT NULL,
    event_id      TEXT NOT NULL,
    first_seen_at BIGINT NOT NULL,
    PRIMARY KEY (script_id, environment, name, event_id)
  );
  CREATE INDEX dedup_keys_age ON dedup_keys(first_seen_at);
  CREATE TABLE dispatch_queue (
    event_seq    BIGINT PRIMARY KEY,
    lease_owner  TEXT,
    lease_until  BIGINT
  );
  CREATE TABLE deliveries (
    id               BIGSERIAL PRIMARY KEY,
    event_seq        BIGINT NOT NULL,
    script_id        TEXT NOT NULL,
    destination_id   TEXT NOT NULL,
    destination_type TEXT NOT NULL,
    event_id         TEXT,
    item             TEXT,
    status           TEXT NOT NULL CHECK (status IN ('pending','delivered','failed','dead','skipped')),
    skip_reason      TEXT,
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  BIGINT,
    lease_owner      TEXT,
    lease_until      BIGINT,
    last_status_code INTEGER,
    last_error       TEXT,
    received_at      BIGINT NOT NULL,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL,
    delivered_at     BIGINT
  );
  CREATE INDEX deliveries_due ON deliveries(destination_id, next_attempt_at) WHERE status = 'pending';
  CREATE INDEX deliveries_account ON deliveries(script_id, status);
  CREATE INDEX deliveries_event ON deliveries(event_id) WHERE event_id IS NOT NULL;
  CREATE INDEX deliveries_event_seq ON deliveries(event_seq);
  CREATE INDEX deliveries_problems ON deliveries(status) WHERE status IN ('failed', 'dead');
  CREATE TABLE delivery_attempts (
    id             BIGSERIAL PRIMARY KEY,
    destination_id TEXT NOT NULL,
    attempted_at   BIGINT NOT NULL,
    status_code    INTEGER,
    latency_ms     INTEGER NOT NULL,
    response_body  TEXT,
    error_class    TEXT,
    outcome        TEXT NOT NULL CHECK (outcome IN ('success','retryable','permanent')),
    message        TEXT,
    events         INTEGER NOT NULL
  );
  CREATE INDEX delivery_attempts_age ON delivery_attempts(attempted_at);
  CREATE TABLE delivery_attempt_items (
    attempt_id   BIGINT NOT NULL,
    delivery_id  BIGINT NOT NULL,
    PRIMARY KEY (attempt_id, delivery_id)
  );
  CREATE INDEX delivery_attempt_items_delivery ON delivery_attempt_items(delivery_id);
  CREATE TABLE destination_health (
    destination_id  TEXT PRIMARY KEY,
    last_success_at BIGINT,
    last_failure_at BIGINT,
    failing_since   BIGINT,
    paused_at       BIGINT,
    pause_reason    TEXT,
    paused_destination_updated_at BIGINT
  );
  CREATE TABLE custom_records (
    seq          BIGSERIAL PRIMARY KEY,
    script_id    TEXT NOT NULL,
    customer     TEXT NOT NULL,
    endpoint     TEXT NOT NULL,
    type         TEXT NOT NULL,
    record_key   TEXT,
    request_id   TEXT NOT NULL,
    received_at  BIGINT NOT NULL,
    data         TEXT NOT NULL
  );
  CREATE UNIQUE INDEX custom_records_key ON custom_records(script_id, endpoint, type, record_key) WHERE record_key IS NOT NULL;
  CREATE INDEX custom_records_account ON custom_records(script_id, seq);
  -- Shared intake rate limits: one token bucket per key, updated atomically by every instance.
  -- UNLOGGED: no WAL and no fsync per request; a database crash only refills the buckets.
  CREATE UNLOGGED TABLE rate_buckets (
    key     TEXT PRIMARY KEY,
    tokens  DOUBLE PRECISION NOT NULL,
    at      BIGINT NOT NULL,
    -- Tokens the last take handed out (0: refused).
    granted DOUBLE PRECISION NOT NULL
  );
  -- Scheduled jobs: the instance that inserts (job, slot) runs that slot; the others skip it.
  CREATE TABLE job_runs (
    job        TEXT NOT NULL,
    slot       BIGINT NOT NULL,
    owner      TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    PRIMARY KEY (job, slot)
  );
`;
