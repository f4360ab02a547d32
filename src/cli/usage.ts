// The one usage text of the CLI. Every command is listed, including the groups this
// build does not ship yet, so `--help` is truthful about what exists.

/** Command groups named in the interface that this build does not provide. */
export const UNAVAILABLE_GROUPS: readonly string[] = [];

export const USAGE = `Usage: tracklane <command> [options]

Every command accepts --json (machine-readable output on stdout) and --help.
Settings come from the environment (DATA_DIR, DATABASE_URL, PUBLIC_BASE_URL, ...) and,
beneath it, from the project folder's .env or the file ENV_FILE names, as for the
service; relative paths start at the project folder, whatever folder you are in.
Only migrate and serve create a store (or a PostgreSQL schema); other commands
refuse a missing one.
TRACKLANE_DEBUG=1 adds a stack trace to unexpected errors.

Commands:
  serve                                  run the service (same as npm start)
  migrate                                apply the store's migrations and exit (for
                                         PostgreSQL operators who migrate separately)
  backup FILE [--force]                  copy the SQLite store to FILE, consistent and
                                         safe while the server runs; an existing FILE
                                         only with --force (PostgreSQL: use pg_dump)
  restore FILE                           put the backup FILE in place of the SQLite store
                                         (stop the server first: refused while one has
                                         the store open); the replaced store is kept as
                                         tracklane-replaced-<time>.db beside it
  migrate-store --to postgres://… [--force]
                                         copy the whole SQLite store (stop the server
                                         first) into that PostgreSQL database, all or
                                         nothing; refused while a server has the store
                                         open and when the target holds tracklane data,
                                         --force copies anyway (and replaces that data)

  accounts create --name N [--tier BASIC|FLEX|PRO|CUSTOM] [--addon] [--host URL]
                  [--country CC] [--tax-rate P]
                                         create an account; prints its script id and
                                         access token (the token is shown only once)
  accounts list                          list accounts
  accounts show ID                       show one account
  accounts update ID [--name N] [--tier T] [--addon|--no-addon] [--enable|--disable]
                  [--host URL] [--country CC] [--tax-rate P] [--approve-event NAME]...
                  [--customer SLUG|--no-customer] [--rate-limit N]
                  [--pin-endpoint ENDPOINT=VERSION]... [--unpin-endpoint ENDPOINT]...
                  [--consent-default granted|denied]
                                         change an account; --host/--country/--tax-rate ''
                                         clear the value, --customer '' unbinds (another
                                         customer, or none, drops the endpoint pins);
                                         --rate-limit: requests/s on endpoints 1-3 ('' = default);
                                         --pin-endpoint: the custom endpoint version its
                                         requests get when they name none (ENDPOINT is
                                         the endpoint folder's name; others exit 2);
                                         --consent-default: how an event without a
                                         valid consent object is read (default granted)
  accounts rotate-token ID [--grace-hours H]
                                         issue a new token; older ones keep working
                                         for H hours (default 24)

  events list [--account ID] [--status accepted|rejected|duplicate] [--limit N]
                                         most recent received events first (default 100)
  events show EVENT_ID [--account ID]    one event (by its event.id, or tracklane's id): status,
                                         issues, the stored payload, and every delivery

  destinations add ID --type PLUGIN --config JSON|@file [--name N]
                                         connect a destination; the config is checked
                                         against the plugin's settings schema
  destinations list ID                   an account's destinations, secrets masked
  destinations remove ID DEST_ID         disconnect a destination
  destinations update ID DEST_ID [--config JSON|@file] [--replace-config] [--name N] [--enable|--disable]
                                         change a destination's config, name or state;
                                         --config merges into the stored config (keys given
                                         replace, null removes a key, secrets not given are
                                         kept); --replace-config replaces it whole
  rules check                            validate every rule file under RULES_DIR as the
                                         service loads them; prints each error as
                                         file: path: message and exits 1 if there is one
                                         (the files alone: store versions are checked
                                         when they are published)
  rules preview --account ID --event FILE
                                         what endpoint 2's preview shows for the event in
                                         FILE: per destination, the native requests.
                                         FILE holds one event payload exactly as you would
                                         POST it to the intake, e.g.
                                         {"event":{"name":"lead_created","id":"L-1"},
                                          "context":{"environment":"prod","data_source":"crm"}}
  rules import [--message M] [--author A]
                                         store each rule file under RULES_DIR that differs
                                         from its live version as a new live version; all
                                         files are checked as a whole first (all or nothing)
  rules export [--dir DIR]               write every live store version as a rule file
                                         under DIR (default RULES_DIR), ready to commit
  rules history [--destination D] [--scope S] [--limit N]
                                         publishes, rollbacks and reverts, newest first (default 100);
                                         S is default or a script id
  rules diff A B                         rule-by-rule changes from version A to version B
  rules publish FILE [--scope default|SCRIPT_ID] [--message M] [--author A]
                                         check one rule file with the rules it joins, then
                                         make it the live version of its destination for
                                         the scope (default: the defaults); running
                                         instances serve it within 2 s
  rules rollback VERSION [--message M] [--author A]
                                         make an earlier version live again (checked the
                                         same way)
  rules revert DESTINATION [--scope default|SCRIPT_ID] [--message M] [--author A]
                                         no published version live for the scope any more:
                                         its rule file or plugin default serves again
  deliveries list [--account ID] [--status pending|delivered|failed|dead|skipped]
                  [--event-id X] [--destination DEST_ID] [--limit N]
                                         deliveries, newest first (default 100); paused
                                         destinations are flagged
  deliveries show ID                     one delivery with every attempt (status, latency,
                                         error class, response body)
  deliveries replay (--account ID | --destination DEST_ID | --all) [--status dead|failed|delivered]
                  [--event-id X] [--since ISO] [--force] [--dry-run]
                                         re-queue dead and failed deliveries (due now,
                                         attempts reset); delivered ones only with --force;
                                         at most MAX_REPLAY per call (the rest: run again);
                                         --dry-run counts and changes nothing
  deliveries resume DEST_ID              un-pause a destination and send its backlog now
                                         (so does destinations update DEST_ID --enable)
  deliveries retry-now (--account ID | --destination DEST_ID | --all)
                                         send pending retries now instead of waiting for
                                         their backoff (after fixing a destination);
                                         every account's only with --all
  stats [--account ID]                   per destination: deliveries by status, oldest
                                         pending age, paused or not; events awaiting fan-out
  plugins list                           the destination plugins loaded (the shipped
                                         plugins/, then the PLUGINS_DIR folders)
  plugins new TYPE                       scaffold a destination folder TYPE/ in the first
                                         PLUGINS_DIR folder (else plugins/): settings,
                                         native schema, rules, request builder, reply
                                         classifier, example settings, a golden test of
                                         its documented example, README; SDK imports only
  customers list                         the custom endpoints loaded (the shipped
                                         customers/, then the CUSTOMERS_DIR folders),
                                         with their auth, rate limits, versions and each
                                         version's requests served, production and test
                                         (--json: per account)
  customers new SLUG ENDPOINT            scaffold SLUG/endpoints/ENDPOINT/ in the first
                                         CUSTOMERS_DIR folder (else customers/): a
                                         working schema, handler, example.json (version 1
                                         in versions/1/), README and a passing test
  customers new-version SLUG ENDPOINT    copy the current version to the next one
                                         (versions/N/), listed active; the current stays

  test FOLDER [mocha options]            run the tests (*.test.ts) of a plugin or custom
                                         endpoint folder kept anywhere, with this service's
                                         mocha and tsx (tracklane/sdk and chai resolve to
                                         the service's); exits with mocha's code
`;

/** Where a command's settings come from, under each command's usage (the whole text says it at the top). */
export const SETTINGS_NOTE = `Settings: the environment, then the project folder's .env or the file ENV_FILE
names (tracklane --help says more).
`;

/**
 * The usage lines of one group (`accounts`) or one command (`accounts create`),
 * continuation lines included, and where settings come from; the whole text when nothing matches.
 */
export function usageFor(...words: string[]): string {
  const prefix = `  ${words.join(' ')}`;
  const lines = USAGE.split('\n');
  const picked: string[] = [];
  let inBlock = false;
  for (const line of lines) {
    if (line.startsWith(prefix + ' ') || line === prefix) inBlock = true;
    else if (/^ {2}\S/.test(line) || line.trim() === '') inBlock = false;
    // Shifting command and continuation lines alike keeps the columns aligned.
    if (inBlock) picked.push(/^ {2}\S/.test(line) ? `  tracklane ${line.slice(2)}` : ' '.repeat(10) + line);
  }
  return picked.length > 0 ? `Usage:\n${picked.join('\n')}\n\n${SETTINGS_NOTE}` : USAGE;
}
