// Migration 18: the due retries of a destination (pending deliveries attempted before) in an
// index of their own, so a lane finds them ahead of its backlog of first attempts without
// reading through it: a lane serves its due retries first (src/delivery/lane-claims.ts).
export default `
  CREATE INDEX deliveries_retry_due ON deliveries(destination_id, next_attempt_at) WHERE status = 'pending' AND attempts > 0;
`;
