// The fast test tier: the Koa app of createApp (src/app.ts) on a plain HTTP server on
// port 0, over a fresh SQLite file, without what startServer adds around it: no delivery,
// no worker threads (preview hashing, rule previews and custom handlers run inline, events are appended
// on the main connection), no folder watchers, no connection limits or header timeouts.
// Plugins, the rules and the customers folder are those the repository ships (shipped-folders.ts),
// loaded once per process.
// Requests go over real HTTP, so status, headers and body are exactly what a client sees.
// For delivery, threads, hot reload, connection defences or a real process, use
// startTestServer (test-server.ts) or spawnServer (spawn-server.ts). The wiring below
// follows startServer's (src/server.ts): what changes there belongs here too.
import { createServer, type Server } from 'node:http';
import { rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Config } from '../../src/config.ts';
import { createLogger, type Logger } from '../../src/logger.ts';
import { createApp } from '../../src/app.ts';
import type { Running } from '../../src/server.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { SERVER_BUSY_TIMEOUTS } from '../../src/store/sqlite/connection.ts';
import { sqliteFile } from '../../src/store/open-store.ts';
import { openCustomRecordStore } from '../../src/store/sqlite/custom-records.ts';
import { createAuthenticator } from '../../src/accounts/authenticator.ts';
import { createAccountService } from '../../src/accounts/account-service.ts';
import { createMetrics } from '../../src/http/metrics.ts';
import { loadPlugins, type PluginRegistry } from '../../src/destinations/load-plugins.ts';
import { createDestinationCache } from '../../src/destinations/destination-cache.ts';
import { startRuleWatcher, type RuleWatcher } from '../../src/rules/rule-watcher.ts';
import { usePluginRules } from '../../src/rules/plugin-rules.ts';
import { loadCustomers } from '../../src/customers/load-customers.ts';
import { HandlerStopped, type HandlerPool } from '../../src/customers/handler-pool.ts';
import runHandlerTask from '../../src/customers/handler-worker.ts';
import { runDraftTask, type DraftRunner } from '../../src/pipeline/draft-preview.ts';
import { DRAFT_TIME_LIMIT_MS } from '../../src/admin/draft-pool.ts';
import type { CustomerRegistry } from '../../src/customers/types.ts';
import { accountMaker, poster, tempDir, type TestTarget } from './test-server.ts';
import { configOverShippedFolders } from './shipped-folders.ts';
export { tempDir, waitFor, type PostOptions, type TestAccount, type TestResponse } from './test-server.ts';

export interface TestAppOptions {
  /** SQLite busy timeout of event appends; short values let a test provoke a 503 quickly. */
  busyTimeoutMs?: number;
  /** Where the app logs (default: silent). */
  logger?: Logger;
  /**
   * A rule watcher of its own, as the server runs it: RULES_DIR watched and polled, the
   * store's live versions overlaid (file edits and publishes apply). Default: the rules
   * under RULES_DIR loaded once per process and never reloaded.
   */
  watchRules?: boolean;
}

export interface TestApp extends TestTarget {
  /** What a full server's Running has that this app has too, under the same names. */
  running: Pick<Running, 'url' | 'app' | 'store' | 'writer' | 'logger' | 'plugins' | 'rules' | 'customers'>;
}

const silent = createLogger('silent');
const pluginsByDir = new Map<string, Promise<PluginRegistry>>();
const rulesByDirs = new Map<string, RuleWatcher>();
let shippedCustomers: Promise<CustomerRegistry> | undefined;

/** The rules of `config` as loaded the first time (the same RuleWatcher interface; nothing watched or polled). */
function loadedOnce(config: Config): RuleWatcher {
  const key = [config.rulesDir, ...config.pluginsDirs].join('\0');
  let w = rulesByDirs.get(key);
  if (!w) rulesByDirs.set(key, (w = startRuleWatcher({ dir: config.rulesDir, logger: silent, watch: false, pollMs: 0 })));
  return w;
}

/** Custom handlers on the calling thread, through the worker's own entry (JSON in and out, logs recorded). */
const inlineHandlers: HandlerPool = {
  async run(task, timeoutMs) {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new HandlerStopped(`took longer than ${timeoutMs} ms and was stopped`)), timeoutMs);
    });
    try {
      return await Promise.race([runHandlerTask(task), late]);
    } finally {
      clearTimeout(timer);
    }
  },
  async close() {},
};

/** Rule previews and replays on the calling thread, through the same task code the worker runs. */
const inlineDrafts = (plugins: PluginRegistry): DraftRunner => ({
  timeLimitMs: DRAFT_TIME_LIMIT_MS,
  run: (request) => runDraftTask({ ...request, timeLimitMs: DRAFT_TIME_LIMIT_MS }, plugins),
  async close() {},
});

/** `env` as for startTestServer (loadConfig's variables); DATA_DIR is a fresh temp folder. */
export async function startTestApp(env: Record<string, string> = {}, opts: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = tempDir();
  const config = configOverShippedFolders({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env });
  const logger = opts.logger ?? silent;
  const pluginsKey = config.pluginsDirs.join('\0');
  if (!pluginsByDir.has(pluginsKey)) pluginsByDir.set(pluginsKey, loadPlugins(config.pluginsDirs));
  const plugins = await pluginsByDir.get(pluginsKey)!;
  const customers = config.customersDirs.length === 1
    ? await (shippedCustomers ??= loadCustomers(config.customersDirs))
    : await loadCustomers(config.customersDirs);
  // No writer thread: appends run on the main connection, which waits for a lock as the server's writer thread would.
  const busyTimeoutMs = opts.busyTimeoutMs ?? SERVER_BUSY_TIMEOUTS.writerMs;
  const store = openSqliteStore({ file: sqliteFile(config), writerThread: false, busyTimeoutMs, mainBusyTimeoutMs: busyTimeoutMs });
  // As startServer: the plugins' default rules under RULES_DIR, then the files (and, watched, the store's live versions).
  usePluginRules(config.rulesDir, config.pluginsDirs);
  const rules = opts.watchRules ? startRuleWatcher({ dir: config.rulesDir, logger, store: store.rules }) : loadedOnce(config);
  await rules.ready;
  const metrics = createMetrics();
  const records = openCustomRecordStore(sqliteFile(config), { busyTimeoutMs: SERVER_BUSY_TIMEOUTS.mainMs });
  const authenticator = createAuthenticator(store);
  const app = createApp({
    config,
    store,
    logger,
    authenticator,
    metrics,
    preview: { plugins, rules: () => rules.current(), pool: null },
    destinations: createDestinationCache(store.destinations),
    customers: { registry: customers, records, handlers: inlineHandlers },
    rules: { watcher: rules, dir: config.rulesDir, drafts: inlineDrafts(plugins) },
  });
  const server: Server = createServer(app.koa.callback());
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => done());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const accounts = createAccountService(store);

  return {
    url,
    config,
    dataDir,
    accounts,
    running: { url, app, store, writer: app.writer, logger, plugins, rules, customers },
    account: accountMaker(accounts),
    post: poster(url),
    async close() {
      app.startDraining();
      const closed = new Promise<void>((done) => server.close(() => done()));
      server.closeAllConnections();
      await closed;
      await app.writer.drain();
      await records.drain();
      await records.close();
      if (opts.watchRules) rules.close();
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
