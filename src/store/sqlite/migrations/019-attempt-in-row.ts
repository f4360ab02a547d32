// Migration 19: a delivery keeps the first attempt recorded for it in its row (attempt_id);
// only its other attempts (retries, a request that carried it while another claim held it)
// get a link row in delivery_attempt_items, so a delivery settled by its first request costs
// no link row and no index entries for one. Links stored before stay as they are: a
// delivery's attempts are its links and its attempt_id, whichever holds them.
export default `
  ALTER TABLE deliveries ADD COLUMN attempt_id INTEGER;
`;
