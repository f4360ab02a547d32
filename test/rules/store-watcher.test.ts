// The rule watcher with a store: live versions replace the files of the same scope and
// destination, a publish or rollback through another connection (another instance) is served
// within 2 s, refresh() reads at once, a bad stored set is refused like a bad file edit, and a
// store that cannot be read is logged and read again on the next poll. SQLite and PostgreSQL.
import { expect } from 'chai';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { openPostgresStore } from '../../src/store/postgres/pg-store.ts';
import type { Store } from '../../src/store/types.ts';
import type { RuleFile } from '../../src/rules/types.ts';
import { startRuleWatcher, type RuleWatcher } from '../../src/rules/rule-watcher.ts';
import { tempDir, waitFor } from '../helpers/test-server.ts';
import { createTestDatabase, requirePostgres, type TestDatabase } from '../helpers/postgres.ts';

interface LogLine { level: string; obj: object; msg?: string }
function memoryLogger() {
  const lines: LogLine[] = [];
  const at = (level: string) => (obj: object, msg?: string) => void lines.push({ level, obj, msg });
  return { lines, logger: { info: at('info'), warn: at('warn'), error: at('error') } };
}

const T0 = 1_800_000_000_000;
const ga4 = (name: string, extra: RuleFile['rules'] = []): RuleFile => ({ destination: 'ga4', rules: [{ id: 'ga4.page', event: '*', output: { name } }, ...extra] });
const publish = (s: Store, scope: string, document: RuleFile) => s.rules.publish({ scope, destination: 'ga4', document, author: 'test', message: '' }, T0);
const nameFor = (w: RuleWatcher, scriptId = 'OTHER000') => w.current().rulesFor(scriptId, 'ga4')[0]?.output.name;
/** Served within 2 s, awaited (no fixed sleep). */
const within2s = async (cond: () => boolean, what: string) => expect(await waitFor(cond, 2_000, 20), what).to.equal(true);

type Kind = 'SQLite' | 'PostgreSQL';
for (const kind of ['SQLite', 'PostgreSQL'] as Kind[]) describe(`rule watcher with a store (${kind})`, function () {
  this.timeout(20_000);
  let pg: TestDatabase | undefined;
  let dir: string;
  let data: string;
  const opened: Store[] = [];
  const watchers: RuleWatcher[] = [];
  /** A store on the suite's database; several calls are several instances. */
  const open = async (): Promise<Store> => {
    const s = kind === 'SQLite' ? openSqliteStore({ file: join(data, 'tracklane.db') }) : await openPostgresStore({ url: pg!.url });
    opened.push(s);
    return s;
  };
  const watch = (store: Store | Pick<Store['rules'], 'live' | 'revision'>, logger = memoryLogger().logger, storePollMs?: number) => {
    const w = startRuleWatcher({ dir, logger, displayBase: dir, store: 'rules' in store ? store.rules : store, storePollMs, watch: false, pollMs: 50 });
    watchers.push(w);
    return w;
  };

  before(async function () {
    if (kind === 'PostgreSQL') {
      await requirePostgres(this);
      pg = await createTestDatabase();
    }
  });
  after(async () => {
    await pg?.drop();
  });
  beforeEach(async () => {
    await pg?.reset();
    dir = tempDir('tl-rules-');
    data = tempDir('tl-data-');
    writeFileSync(join(dir, 'ga4.json'), JSON.stringify(ga4('file')));
    writeFileSync(join(dir, 'meta-capi.json'), JSON.stringify({ destination: 'meta-capi', rules: [{ id: 'm.page', event: '*', output: { event_name: 'file' } }] }));
  });
  afterEach(async () => {
    for (const w of watchers.splice(0)) w.close();
    for (const s of opened.splice(0)) await s.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(data, { recursive: true, force: true });
  });

  it('without versions the files serve; a publish through another instance replaces its file within 2 s, a rollback too', async () => {
    const [a, b] = [await open(), await open()];
    const [mine, w] = [watch(a), watch(b)];
    await Promise.all([mine.ready, w.ready]);
    expect(w.valid()).to.equal(true);
    expect(nameFor(w)).to.equal('file');
    const v1 = await publish(a, 'default', ga4('store-1'));
    await within2s(() => nameFor(w) === 'store-1' && nameFor(mine) === 'store-1', 'publish served by both instances');
    expect(w.current().files.map((f) => [f.file, f.version])).to.deep.equal([
      ['meta-capi.json', undefined], [`version ${v1.version} (default/ga4)`, v1.version],
    ]);
    await publish(a, 'default', ga4('store-2'));
    await within2s(() => nameFor(w) === 'store-2', 'second publish served');
    await a.rules.rollback(v1.version, 'test', 'back', T0);
    await within2s(() => nameFor(w) === 'store-1', 'rollback served');
    // An account's version overrides for that account only, over the stored defaults.
    await publish(a, 'AB12CD34', ga4('account'));
    await within2s(() => nameFor(w, 'AB12CD34') === 'account', 'account version served');
    expect(nameFor(w)).to.equal('store-1');
  });

  it('files without a version keep hot-reloading; an edit of a file a version replaces changes nothing', async () => {
    const s = await open();
    await publish(s, 'default', ga4('stored'));
    const w = watch(s);
    await w.ready;
    expect(nameFor(w)).to.equal('stored');
    writeFileSync(join(dir, 'meta-capi.json'), JSON.stringify({ destination: 'meta-capi', rules: [{ id: 'm.page', event: '*', output: { event_name: 'edited' } }] }));
    writeFileSync(join(dir, 'ga4.json'), '{ not json');
    await within2s(() => w.current().rulesFor('X', 'meta-capi')[0]?.output.event_name === 'edited', 'file edit served');
    expect(w.errors()).to.deep.equal([]);
    expect(nameFor(w)).to.equal('stored');
  });

  it('refresh() serves a publish at once, without waiting for a poll', async () => {
    const s = await open();
    const w = watch(s, memoryLogger().logger, 0);
    await w.ready;
    await publish(s, 'default', ga4('now'));
    expect(nameFor(w)).to.equal('file');
    const e = await w.refresh();
    expect(e.ok).to.equal(true);
    expect(nameFor(w)).to.equal('now');
  });

  it('a stored set that does not check is refused and logged with its version; the last good rules keep serving', async () => {
    const s = await open();
    const log = memoryLogger();
    const w = watch(s, log.logger);
    await w.ready;
    const bad = await publish(s, 'AB12CD34', ga4('acct', [{ id: 'ga4.nope', disabled: true } as RuleFile['rules'][number]]));
    await within2s(() => w.errors().length > 0, 'refusal seen');
    expect(w.errors()).to.deep.equal([
      { file: `version ${bad.version} (AB12CD34/ga4)`, path: '/rules/1/id', message: 'disables "ga4.nope", which is not a default ga4 rule' },
    ]);
    expect(log.lines.some((l) => l.level === 'warn' && /last good rules keep serving/.test(l.msg ?? ''))).to.equal(true);
    expect(nameFor(w, 'AB12CD34')).to.equal('file');
  });

  it('a store that cannot be read: no rules until it can (delivery waits), then read on the next poll; later failures keep the last good rules', async () => {
    let target: Store | null = null;
    const indirect = {
      live: () => (target ?? fail()).rules.live(),
      revision: () => (target ?? fail()).rules.revision(),
    };
    const log = memoryLogger();
    const w = watch(indirect, log.logger, 50);
    await w.ready;
    expect(w.valid()).to.equal(false);
    expect(w.errors()).to.deep.equal([{ file: 'rule store', path: '', message: 'cannot be read: the database is down' }]);
    expect(log.lines.filter((l) => l.level === 'error').map((l) => l.msg)).to.deep.equal(['the rule store cannot be read: no rules yet, delivery waits; retrying on every poll']);
    target = await open();
    await publish(target, 'default', ga4('up'));
    await within2s(() => w.valid() && nameFor(w) === 'up', 'read once the store answers');
    const errorsBefore = log.lines.filter((l) => l.level === 'error').length;
    target = null;
    await within2s(() => log.lines.filter((l) => l.level === 'error').length > errorsBefore, 'failure logged');
    expect((await w.refresh()).ok).to.equal(false);
    expect(nameFor(w)).to.equal('up');
    expect(w.errors()).to.deep.equal([]);
  });
});

function fail(): never {
  throw new Error('the database is down');
}
