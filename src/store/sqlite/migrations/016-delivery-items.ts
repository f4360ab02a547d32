// Migration 16: a delivery's item (the mapped native event it is sent from) in a table of its
// own, kept only while the delivery may still be sent (pending, or failed/dead for a replay)
// and deleted when it is delivered. Kept in the row and set to NULL on delivery, the items of a
// backlog left the pages that held them mostly empty (85 % unused in a 10,000-event live run):
// SQLite does not merge pages whose rows shrink, while whole rows deleted in the order they were
// stored free whole pages for new ones.
export default `
  CREATE TABLE delivery_items (
    delivery_id INTEGER PRIMARY KEY,
    item        TEXT NOT NULL
  ) STRICT;
  INSERT INTO delivery_items (delivery_id, item) SELECT id, item FROM deliveries WHERE item IS NOT NULL;
  ALTER TABLE deliveries DROP COLUMN item;
`;
