// A real SQLite store in a temp dir, the real plugins and rules as the repository ships them, accounts and destinations
// pointing at loopback doubles, events stored the way intake stores them, and a dispatcher
// with a controllable clock. Each test file builds its own.
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAccountService } from '../../src/accounts/account-service.ts';
import { SPEC_EVENT_NAMES } from '../../src/accounts/types.ts';
import { usePluginRules } from '../../src/rules/plugin-rules.ts';
import { createDispatcher, type Dispatcher, type DispatcherOptions } from '../../src/delivery/dispatcher.ts';
import { createHttpSender, type HttpSender } from '../../src/delivery/http-sender.ts';
import { createRetryPolicy } from '../../src/delivery/retry-policy.ts';
import { loadPlugins, type PluginRegistry } from '../../src/destinations/load-plugins.ts';
import { loadRules } from '../../src/rules/load-rules.ts';
import type { RuleSet } from '../../src/rules/rule-set.ts';
import { validateEvent } from '../../src/schema/validate-event.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { DestinationRecord, Store } from '../../src/store/types.ts';
import { shippedFolderEnv, shippedFolders } from '../helpers/shipped-folders.ts';
import { shippedExampleSettings } from '../helpers/shipped-plugins.ts';
import type { ExampleSettings } from '../../src/sdk/testing/example-settings.ts';
import { tempDir } from '../helpers/test-server.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const silent = { info() {}, warn() {}, error() {} };

/** A clock tests move by hand. */
export interface FakeClock {
  (): number;
  advance(ms: number): void;
  set(ms: number): void;
}

export function fakeClock(start = Date.now()): FakeClock {
  let now = start;
  const clock = (() => now) as FakeClock;
  clock.advance = (ms) => void (now += ms);
  clock.set = (ms) => void (now = ms);
  return clock;
}

/** A checkout_completed every plugin maps: user identifiers, consent for all, GA cookie. */
export function checkout(id: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    event: { name: 'checkout_completed', id, value: 120.5, currency: 'EUR' },
    context: { environment: 'prod', data_source: 'website', url: 'https://shop.example.com/thanks', user_agent: 'Mozilla/5.0 test' },
    products: [{ id: 'MUG-1', name: 'Mug', price_base: 59.99, price: 49.99, quantity: 2, category: 'Kitchen', tax_included: true, tax_percent: 19 }],
    user: { id: `cust-${id}`, email: `buyer-${id}@example.com`, phone: '+40 721 234 567' },
    consent: { analytics: true, marketing: true, personalization: true },
    cookies: [{ name: '_ga', value: 'GA1.1.1234567890.1700000000' }, { name: '_fbp', value: 'fb.1.1700000000000.1234567890' }],
    ...over,
  };
}

/** Settings for a destination of each shipped plugin sending to `endpoint`: each plugin's own example-settings.ts. */
export const SETTINGS: Record<string, ExampleSettings> = await shippedExampleSettings();

/** The webhook's signing secret in those settings. */
export const WEBHOOK_SECRET = SETTINGS.webhook('https://example.com').secret as string;

export interface Fixture {
  dir: string;
  store: Store;
  plugins: PluginRegistry;
  rules: { current(): RuleSet };
  clock: FakeClock;
  /** Creates an account that may use the standard intake; returns its script id. */
  account(): Promise<string>;
  destination(scriptId: string, type: string, endpoint: string, extra?: Record<string, unknown>): Promise<DestinationRecord>;
  /** Validates and stores an accepted event as intake does; returns the stored row id. */
  ingest(scriptId: string, payload: Record<string, unknown>): Promise<string>;
  sender(totalTimeoutMs?: number): HttpSender;
  dispatcher(over?: Partial<DispatcherOptions>): Dispatcher;
  close(): Promise<void>;
}

/** `open`: the store to run on (a contract suite's harness); default a SQLite file in the fixture's directory. */
export async function createFixture(opts: { open?: () => Promise<Store> } = {}): Promise<Fixture> {
  const dir = tempDir('tl-dlv-');
  const store = opts.open ? await opts.open() : openSqliteStore({ file: join(dir, 'tracklane.db') });
  const { pluginsDir, rulesDir } = shippedFolders();
  const plugins = await loadPlugins(pluginsDir);
  // The plugins' default rules under the operator's layer, as the server loads them (a file
  // run alone must not depend on another file having registered them).
  usePluginRules(rulesDir, pluginsDir);
  const loaded = loadRules(rulesDir);
  if (!loaded.ok) throw new Error('rules failed to load');
  const ruleSet = loaded.ruleSet;
  const clock = fakeClock();
  const senders: HttpSender[] = [];
  const dispatchers: Dispatcher[] = [];
  const accounts = createAccountService(store);
  const sender = (totalTimeoutMs = 2_000): HttpSender => {
    const s = createHttpSender({ allowPrivate: true, connectTimeoutMs: 1_000, totalTimeoutMs });
    senders.push(s);
    return s;
  };
  return {
    dir,
    store,
    plugins,
    rules: { current: () => ruleSet },
    clock,
    async account() {
      const { account } = await accounts.create({ name: 'Shop', tier: 'FLEX', addon: true, country: 'RO' });
      return account.scriptId;
    },
    async destination(scriptId, type, endpoint, extra = {}) {
      return store.destinations.add({
        id: `dst_${randomBytes(8).toString('hex')}`, scriptId, type, name: type, enabled: true,
        settings: { ...SETTINGS[type](endpoint), ...extra },
      });
    },
    async ingest(scriptId, payload) {
      const r = validateEvent(payload, { approvedEvents: new Set(SPEC_EVENT_NAMES), defaultTaxRate: 19, host: null });
      if (!r.event) throw new Error(`invalid test event: ${JSON.stringify(r.errors)}`);
      const ev = payload.event as { name: string; id?: string };
      const id = randomUUID();
      const [status] = await store.events.append([{
        id, scriptId, name: ev.name, eventId: ev.id ?? null, status: 'accepted', source: 'event', requestId: randomUUID(),
        receivedAt: clock(), errors: [], warnings: r.warnings, payload: r.event,
      }]);
      if (status !== 'accepted') throw new Error(`event stored as ${status}`);
      return id;
    },
    sender,
    dispatcher(over = {}) {
      const d = createDispatcher({
        store, plugins, rules: { current: () => ruleSet }, pool: null, logger: silent, clock,
        sender: over.sender ?? sender(), schedule: createRetryPolicy({ scheduleMs: [1_000, 2_000], random: () => 0.5 }),
        leaseMs: 30_000, sendTimeoutMs: 2_000, lingerMs: 20, perDestinationConcurrency: 4, pauseAfterMs: 0,
        pollMs: 10, pollMaxMs: 200, refreshMs: 200, ...over,
      });
      dispatchers.push(d);
      return d;
    },
    async close() {
      for (const d of dispatchers) await d.stop(500).catch(() => undefined);
      for (const s of senders) await s.close().catch(() => undefined);
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface FixtureWithDouble {
  readonly f: Fixture;
  readonly dbl: DestinationDouble;
}

/**
 * Mocha hooks giving each test a fresh fixture and one destination double, closed after it.
 * @example const t = useFixtureWithDouble(); it('…', async () => { await t.f.destination(id, 'ga4', t.dbl.url); });
 */
export function useFixtureWithDouble(opts: { open?: () => Promise<Store> } = {}): FixtureWithDouble {
  let f: Fixture | undefined;
  let dbl: DestinationDouble | undefined;
  beforeEach(async () => {
    f = await createFixture(opts);
    dbl = await startDestinationDouble();
  });
  afterEach(async () => {
    await f?.close();
    await dbl?.close();
  });
  return {
    get f() {
      return f!;
    },
    get dbl() {
      return dbl!;
    },
  };
}

/** The real CLI (`node src/cli/bin.mjs …`) on the fixture's database. */
export function fixtureCli(f: () => Fixture) {
  return (...args: string[]) => new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [join(ROOT, 'src/cli/bin.mjs'), ...args], {
      cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...shippedFolderEnv(), DATA_DIR: f().dir, DATABASE_URL: '', PORT: '' },
    }, (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }));
  });
}
