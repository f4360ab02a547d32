// Schema migrations, versioned in code: one file each under migrations/, applied once,
// in order, inside a transaction; PRAGMA user_version records how far a database has come.
// A new migration is a new file plus one line here; a shipped file is never edited.
import type Database from 'better-sqlite3';
import m001 from './migrations/001-accounts-events.ts';
import m002 from './migrations/002-destinations.ts';
import m003 from './migrations/003-seen-products.ts';
import m004 from './migrations/004-dedup-rate-limit.ts';
import m005 from './migrations/005-deliveries.ts';
import m006 from './migrations/006-custom-records.ts';
import m007 from './migrations/007-dedup-environment.ts';
import m008 from './migrations/008-rule-versions.ts';
import m009 from './migrations/009-event-id-index.ts';
import m010 from './migrations/010-held-dispatch.ts';
import m011 from './migrations/011-endpoint-versions.ts';
import m012 from './migrations/012-consent-default.ts';
import m013 from './migrations/013-rule-revert.ts';
import m014 from './migrations/014-attempt-request.ts';
import m015 from './migrations/015-write-once-deliveries.ts';
import m016 from './migrations/016-delivery-items.ts';
import m017 from './migrations/017-dispatch-map-claims.ts';
import m018 from './migrations/018-retry-due-index.ts';
import m019 from './migrations/019-attempt-in-row.ts';
import m020 from './migrations/020-delivered-without-row.ts';
import m021 from './migrations/021-packed-payload.ts';
import m022 from './migrations/022-fan-out-cursor.ts';
import m023 from './migrations/023-event-row-id-index.ts';

export const MIGRATIONS: readonly string[] = [m001, m002, m003, m004, m005, m006, m007, m008, m009, m010, m011, m012, m013, m014, m015, m016, m017, m018, m019, m020, m021, m022, m023];

/** Brings the database to the latest schema version. */
export function migrate(db: Database.Database): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(`the database is at schema version ${current}, newer than this build knows (${MIGRATIONS.length})`);
  }
  for (let v = current; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]);
      db.pragma(`user_version = ${v + 1}`);
    }).immediate();
  }
}
