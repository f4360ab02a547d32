// Runs the real CLI (`node src/cli/bin.mjs …`) against a throwaway DATA_DIR, the way
// an operator would, and checks the --json contract on every call.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { shippedFolderEnv } from '../helpers/shipped-folders.ts';
import { openConnection } from '../../src/store/sqlite/connection.ts';
import { migrate } from '../../src/store/sqlite/migrations.ts';
import { createPool } from '../../src/store/postgres/connection.ts';
import { migrate as migratePostgres } from '../../src/store/postgres/migrations.ts';
import { testProcessEnv } from '../helpers/service-variables.ts';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BASE_URL = 'https://track.example.test';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface TempCli {
  dataDir: string;
  run(...args: string[]): Promise<CliResult>;
  /** Runs a command that must succeed with --json, returning its parsed stdout. */
  json<T = Record<string, unknown>>(...args: string[]): Promise<T>;
  remove(): void;
}

/**
 * `databaseUrl`: run against that PostgreSQL database instead of a SQLite file in the temp DATA_DIR.
 * `env`: more settings (e.g. RULES_DIR; the rules, customers and plugins folders are the shipped ones unless named);
 * no other setting reaches the CLI (testProcessEnv). The store is made first (the SQLite file,
 * or the schema in the PostgreSQL database before the first command runs), as `tracklane
 * migrate` would (commands other than migrate never create one); `store: false` leaves
 * DATA_DIR empty and the database as it is.
 */
export function tempCli(opts: { databaseUrl?: string; env?: Record<string, string>; store?: boolean } = {}): TempCli {
  const dataDir = mkdtempSync(tmpdir() + '/tl-');
  if (!opts.databaseUrl && opts.store !== false) createSqliteStore(join(dataDir, 'tracklane.db'));
  const ready = opts.databaseUrl && opts.store !== false ? createPostgresSchema(opts.databaseUrl) : Promise.resolve();
  ready.catch(() => undefined); // a failure surfaces in the first run
  const env = testProcessEnv({ ...shippedFolderEnv(), DATA_DIR: dataDir, DATABASE_URL: opts.databaseUrl ?? '', PORT: '', PUBLIC_BASE_URL: BASE_URL, ...opts.env });
  const run = async (...args: string[]) => {
    await ready;
    return new Promise<CliResult>((resolve) => {
      execFile(process.execPath, [join(ROOT, 'src/cli/bin.mjs'), ...args], { cwd: ROOT, env, encoding: 'utf8' }, (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ code, stdout, stderr });
      });
    });
  };
  return {
    dataDir,
    run,
    async json<T>(...args: string[]) {
      const r = await run(...args, '--json');
      expect(r.stderr, `stderr of ${args.join(' ')}`).to.equal('');
      expect(r.code, `exit code of ${args.join(' ')}`).to.equal(0);
      return JSON.parse(r.stdout) as T;
    },
    remove: () => rmSync(dataDir, { recursive: true, force: true }),
  };
}

/** The tracklane schema in the PostgreSQL database at `url`, as `tracklane migrate` makes it. */
async function createPostgresSchema(url: string): Promise<void> {
  const pool = createPool({ url, max: 1 });
  try {
    await migratePostgres(pool);
  } finally {
    await pool.end();
  }
}

/** Asserts a failure: the exit code, nothing on stdout, and exactly one stderr line matching `reason`. */
export function expectFailure(r: CliResult, code: number, reason: RegExp | string): void {
  expect(r.code, r.stderr).to.equal(code);
  expect(r.stdout).to.equal('');
  expect(r.stderr.endsWith('\n')).to.equal(true);
  expect(r.stderr.trimEnd().split('\n'), 'stderr lines').to.have.length(1);
  if (typeof reason === 'string') expect(r.stderr).to.equal(`tracklane: ${reason}\n`);
  else expect(r.stderr).to.match(reason);
}

/** An empty SQLite store at the current schema, as `tracklane migrate` makes it. */
export function createSqliteStore(file: string): void {
  const db = openConnection(file);
  try {
    migrate(db);
  } finally {
    db.close();
  }
}
