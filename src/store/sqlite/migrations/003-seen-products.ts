// Migration 3: product ids seen in product_viewed / product_added_to_cart (the funnel check).
export default `
  CREATE TABLE seen_products (
    script_id   TEXT NOT NULL,
    product_id  TEXT NOT NULL,
    PRIMARY KEY (script_id, product_id)
  ) STRICT, WITHOUT ROWID;
`;
