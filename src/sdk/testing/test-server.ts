// A real tracklane server on port 0 over a fresh SQLite file and the folders the repository
// ships (shipped-folders.ts; `env` may name others), with helpers to make
// accounts, connect destinations, send requests and read what was stored. Every test file gets
// its own data directory. The core's tests that need no delivery, worker threads, hot reload
// or connection defences use the faster app of test/helpers/test-app.ts, which shares
// account() and post() with this one.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../../config.ts';
import { createLogger, type Logger } from '../../logger.ts';
import { startServer, type Running } from '../../server.ts';
import { openSqliteStore } from '../../store/sqlite/sqlite-store.ts';
import { SERVER_BUSY_TIMEOUTS } from '../../store/sqlite/connection.ts';
import { sqliteFile } from '../../store/open-store.ts';
import { createAccountService, type CreateAccountInput } from '../../accounts/account-service.ts';
import { createDestinationService } from '../../destinations/destination-service.ts';
import type { DestinationRecord } from '../../store/types.ts';
import { openCustomRecordStore } from '../../store/sqlite/custom-records.ts';
import type { CustomRecordFilter, StoredCustomRecord } from '../../store/custom-record-contract.ts';
import { configOverShippedFolders } from './shipped-folders.ts';

export interface TestAccount {
  scriptId: string;
  token: string;
}

/** What both test tiers offer: this full server and the app of test-app.ts. */
export interface TestTarget {
  url: string;
  config: Config;
  dataDir: string;
  accounts: ReturnType<typeof createAccountService>;
  /** Creates an account that may use endpoints 1–3 unless overridden. */
  account(input?: Partial<CreateAccountInput>): Promise<TestAccount>;
  post(path: string, body: unknown, opts?: PostOptions): Promise<TestResponse>;
  close(): Promise<void>;
}

export interface TestServer extends TestTarget {
  running: Running;
  /** The SQLite database file the server writes. */
  databaseFile: string;
  /** Connects a destination of `type` for the account, its settings checked by the plugin's schema (loopback URLs allowed). */
  addDestination(scriptId: string, type: string, settings: Record<string, unknown>, name?: string): Promise<DestinationRecord>;
  /** The custom records stored so far (custom endpoints' `records`), newest first (100 unless `limit`). */
  customRecords(filter?: CustomRecordFilter): Promise<StoredCustomRecord[]>;
}

export interface PostOptions {
  account?: TestAccount;
  /** Raw query string instead of ?id=<scriptId>. */
  query?: string;
  headers?: Record<string, string>;
  /** Send this string as the body instead of JSON.stringify(body). */
  raw?: string | Buffer;
  method?: string;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export function tempDir(prefix = 'tl-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface TestServerOptions {
  /** SQLite busy timeout; short values let a test provoke SQLITE_BUSY quickly. */
  busyTimeoutMs?: number;
  /** Where the server logs (default: silent). */
  logger?: Logger;
  /** The admin API's rule previews' and replays' time limit (StartOptions.draftTimeLimitMs). */
  draftTimeLimitMs?: number;
}

export async function startTestServer(env: Record<string, string> = {}, opts: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = tempDir();
  // Delivery runs on the main thread here unless a test asks for the thread (DELIVERY_THREAD: '1'):
  // tests reach into running.delivery, and a thread per test file costs start-up time.
  const config = configOverShippedFolders({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'silent', DELIVERY_THREAD: '0', ...env });
  // The server's lock waits, as startServer opens the store (see SERVER_BUSY_TIMEOUTS).
  const store = openSqliteStore({ file: sqliteFile(config), busyTimeoutMs: opts.busyTimeoutMs ?? SERVER_BUSY_TIMEOUTS.writerMs, mainBusyTimeoutMs: SERVER_BUSY_TIMEOUTS.mainMs });
  const running = await startServer(config, { logger: opts.logger ?? createLogger('silent'), store, draftTimeLimitMs: opts.draftTimeLimitMs });
  const accounts = createAccountService(running.store);

  const databaseFile = sqliteFile(config);
  return {
    url: running.url,
    config,
    running,
    dataDir,
    databaseFile,
    accounts,
    account: accountMaker(accounts),
    post: poster(running.url),
    addDestination: (scriptId, type, settings, name) =>
      createDestinationService(running.store, running.plugins, { checkUrl: () => null }).add(scriptId, type, settings, name),
    async customRecords(filter) {
      const records = openCustomRecordStore(databaseFile);
      try {
        return await records.list(filter);
      } finally {
        await records.close();
      }
    },
    async close() {
      await running.close(1000);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** `account()` of both test tiers: an account that may use endpoints 1–3 unless `input` says otherwise. */
export function accountMaker(accounts: ReturnType<typeof createAccountService>): (input?: Partial<CreateAccountInput>) => Promise<TestAccount> {
  return async (input = {}) => {
    const { account, accessToken } = await accounts.create({ name: 'Test shop', tier: 'FLEX', addon: true, ...input });
    return { scriptId: account.scriptId, token: accessToken };
  };
}

/** `post()` of both test tiers: a real HTTP request to `base`, answered as a client sees it. */
export function poster(base: string): (path: string, body: unknown, opts?: PostOptions) => Promise<TestResponse> {
  return async (path, body, opts = {}) => {
    const query = opts.query ?? (opts.account ? `id=${opts.account.scriptId}` : '');
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (opts.account) headers['x-service-access-token'] = opts.account.token;
    Object.assign(headers, opts.headers);
    for (const [k, v] of Object.entries(headers)) if (v === '') delete headers[k];
    const res = await fetch(`${base}${path}${query ? `?${query}` : ''}`, {
      method: opts.method ?? 'POST',
      headers,
      body: opts.method === 'GET' || opts.method === 'HEAD' ? undefined : (opts.raw ?? JSON.stringify(body)),
    });
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  };
}

/** Polls `cond` until it returns true or `timeoutMs` passes; returns whether it held. */
export async function waitFor(cond: () => Promise<boolean> | boolean, timeoutMs = 3000, everyMs = 25): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await cond()) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
