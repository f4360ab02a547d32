// Migration 13: a rule change may be a 'revert' (no version live any more: the RULES_DIR file
// or plugin default serves again). SQLite cannot alter a CHECK, so the table is rebuilt with
// its ids (the revision is the newest id) and its index.
export default `
  CREATE TABLE rule_changes_new (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    version     INTEGER NOT NULL REFERENCES rule_versions(version),
    scope       TEXT NOT NULL,
    destination TEXT NOT NULL,
    action      TEXT NOT NULL CHECK (action IN ('publish', 'rollback', 'revert')),
    author      TEXT NOT NULL,
    message     TEXT NOT NULL,
    at          INTEGER NOT NULL
  ) STRICT;
  INSERT INTO rule_changes_new (id, version, scope, destination, action, author, message, at)
    SELECT id, version, scope, destination, action, author, message, at FROM rule_changes;
  DROP TABLE rule_changes;
  ALTER TABLE rule_changes_new RENAME TO rule_changes;
  CREATE INDEX rule_changes_key ON rule_changes(scope, destination, id);
`;
