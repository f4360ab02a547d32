// Migration 5: delivery. The dispatch queue (accepted events awaiting fan-out, filled by a
// trigger in the intake's own transaction), one delivery per (event, destination, native
// event), one attempt row per HTTP request with a link to each delivery it carried, and
// per-destination health (last success, failing since, paused).
export default `
  CREATE TABLE dispatch_queue (
    event_seq    INTEGER PRIMARY KEY,
    lease_owner  TEXT,
    lease_until  INTEGER
  ) STRICT;
  CREATE TRIGGER events_dispatch AFTER INSERT ON events
    WHEN NEW.status = 'accepted'
    BEGIN INSERT INTO dispatch_queue (event_seq) VALUES (NEW.seq); END;
  -- Events acknowledged before this version were never delivered: they are owed too.
  INSERT INTO dispatch_queue (event_seq) SELECT seq FROM events WHERE status = 'accepted';

  CREATE TABLE deliveries (
    id               INTEGER PRIMARY KEY,
    event_seq        INTEGER NOT NULL,
    script_id        TEXT NOT NULL,
    destination_id   TEXT NOT NULL,
    destination_type TEXT NOT NULL,
    event_id         TEXT,
    item             TEXT,
    status           TEXT NOT NULL CHECK (status IN ('pending','delivered','failed','dead','skipped')),
    skip_reason      TEXT,
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  INTEGER,
    lease_owner      TEXT,
    lease_until      INTEGER,
    last_status_code INTEGER,
    last_error       TEXT,
    received_at      INTEGER NOT NULL,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    delivered_at     INTEGER
  ) STRICT;
  CREATE INDEX deliveries_due ON deliveries(destination_id, next_attempt_at) WHERE status = 'pending';
  CREATE INDEX deliveries_account ON deliveries(script_id, status);
  CREATE INDEX deliveries_event ON deliveries(event_id) WHERE event_id IS NOT NULL;
  CREATE INDEX deliveries_event_seq ON deliveries(event_seq);
  CREATE INDEX deliveries_problems ON deliveries(status) WHERE status IN ('failed', 'dead');

  CREATE TABLE delivery_attempts (
    id             INTEGER PRIMARY KEY,
    destination_id TEXT NOT NULL,
    attempted_at   INTEGER NOT NULL,
    status_code    INTEGER,
    latency_ms     INTEGER NOT NULL,
    response_body  TEXT,
    error_class    TEXT,
    outcome        TEXT NOT NULL CHECK (outcome IN ('success','retryable','permanent')),
    message        TEXT,
    events         INTEGER NOT NULL
  ) STRICT;
  CREATE TABLE delivery_attempt_items (
    attempt_id   INTEGER NOT NULL,
    delivery_id  INTEGER NOT NULL,
    PRIMARY KEY (attempt_id, delivery_id)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX delivery_attempt_items_delivery ON delivery_attempt_items(delivery_id);

  CREATE TABLE destination_health (
    destination_id  TEXT PRIMARY KEY,
    last_success_at INTEGER,
    last_failure_at INTEGER,
    failing_since   INTEGER,
    paused_at       INTEGER,
    pause_reason    TEXT,
    -- The destination's updated_at when it was paused: any later change to it resumes.
    paused_destination_updated_at INTEGER
  ) STRICT;
`;
