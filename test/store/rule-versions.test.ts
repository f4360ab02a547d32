// The RuleVersionStore contract, once per store: publish makes a version live, rollback
// makes an older one live again, revert leaves none live (the file serves), history is newest
// first and filters, the revision moves with every change, a guarded write refuses a stale
// revision, a missing version is null.
// PostgreSQL alone: two instances publishing at once end with one live version per key.
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { tempDir } from '../helpers/test-server.ts';
import { openPostgresStore } from '../../src/store/postgres/pg-store.ts';
import { StaleRuleRevisionError, type NewRuleVersion, type Store } from '../../src/store/types.ts';
import type { RuleFile } from '../../src/rules/types.ts';
import { STORE_KINDS, STORE_LABEL, storeHarness } from '../helpers/stores.ts';
import { createTestDatabase, requirePostgres } from '../helpers/postgres.ts';

const T0 = 1_800_000_000_000;
const doc = (name: string, destination = 'ga4'): RuleFile => ({
  destination,
  // Keys deliberately not in alphabetical order: the document comes back exactly as published.
  rules: [{ id: `${destination}.page`, event: '*', output: { 'params.z': 1, name } }, { id: 'off', disabled: true } as RuleFile['rules'][number]],
});
const draft = (scope: string, name: string, destination = 'ga4'): NewRuleVersion =>
  ({ scope, destination, document: doc(name, destination), author: 'ana', message: `set ${name}` });

for (const kind of STORE_KINDS) describe(`rule versions (${STORE_LABEL[kind]})`, () => {
  const harness = storeHarness(kind);
  let store: Store;
  beforeEach(async () => {
    store = await harness.open();
  });
  afterEach(() => harness.close());

  it('an empty store: revision 0, nothing live, no history, a missing version is null', async () => {
    expect(await store.rules.revision()).to.equal(0);
    expect(await store.rules.live()).to.deep.equal([]);
    expect(await store.rules.history({})).to.deep.equal([]);
    expect(await store.rules.get(1)).to.equal(null);
    expect(await store.rules.rollback(1, 'ana', 'nothing there', T0)).to.equal(null);
    expect(await store.rules.revision(), 'a refused rollback changes nothing').to.equal(0);
  });

  it('publish stores the document as given and makes it live; the next one replaces it', async () => {
    const v1 = await store.rules.publish(draft('default', 'v1'), T0);
    expect(v1).to.deep.equal({ version: v1.version, scope: 'default', destination: 'ga4', document: doc('v1'), author: 'ana', message: 'set v1', createdAt: T0, live: true });
    expect(JSON.stringify(v1.document)).to.equal(JSON.stringify(doc('v1')));
    const r1 = await store.rules.revision();
    expect(r1).to.be.greaterThan(0);
    const v2 = await store.rules.publish(draft('default', 'v2'), T0 + 1);
    expect(v2.version).to.be.greaterThan(v1.version);
    expect(await store.rules.revision()).to.be.greaterThan(r1);
    expect((await store.rules.get(v1.version))!.live).to.equal(false);
    expect((await store.rules.live()).map((v) => [v.version, v.scope, v.destination])).to.deep.equal([[v2.version, 'default', 'ga4']]);
  });

  it('live: one version per (scope, destination), defaults first, then accounts by script id', async () => {
    const acct = await store.rules.publish(draft('ZZ99ZZ99', 'z'), T0);
    const meta = await store.rules.publish(draft('default', 'm', 'meta-capi'), T0);
    const ga4 = await store.rules.publish(draft('default', 'g'), T0);
    const other = await store.rules.publish(draft('AB12CD34', 'a'), T0);
    expect((await store.rules.live()).map((v) => v.version)).to.deep.equal([ga4.version, meta.version, other.version, acct.version]);
    expect((await store.rules.live()).every((v) => v.live)).to.equal(true);
  });

  it('rollback makes an older version live again and is recorded; history is newest first and filters', async () => {
    const v1 = await store.rules.publish(draft('default', 'v1'), T0);
    const v2 = await store.rules.publish(draft('default', 'v2'), T0 + 1);
    const acct = await store.rules.publish(draft('AB12CD34', 'a'), T0 + 2);
    const before = await store.rules.revision();
    const back = await store.rules.rollback(v1.version, 'bo', 'v2 broke purchases', T0 + 3);
    expect(back).to.deep.include({ version: v1.version, live: true, author: 'ana', createdAt: T0 });
    expect(await store.rules.revision()).to.be.greaterThan(before);
    expect((await store.rules.live()).map((v) => v.version)).to.deep.equal([v1.version, acct.version]);

    const all = await store.rules.history({});
    expect(all.map((c) => [c.version, c.action, c.author, c.message, c.at, c.live])).to.deep.equal([
      [v1.version, 'rollback', 'bo', 'v2 broke purchases', T0 + 3, true],
      [acct.version, 'publish', 'ana', 'set a', T0 + 2, true],
      [v2.version, 'publish', 'ana', 'set v2', T0 + 1, false],
      [v1.version, 'publish', 'ana', 'set v1', T0, true],
    ]);
    expect(all[0].id).to.equal(await store.rules.revision());
    expect(all.map((c) => c.id)).to.deep.equal([...all.map((c) => c.id)].sort((a, b) => b - a));
    expect((await store.rules.history({ scope: 'AB12CD34' })).map((c) => c.version)).to.deep.equal([acct.version]);
    expect((await store.rules.history({ scope: 'default', destination: 'ga4', limit: 2 })).map((c) => c.action)).to.deep.equal(['rollback', 'publish']);
    expect(await store.rules.history({ destination: 'meta-capi' })).to.deep.equal([]);
  });

  it('revert leaves the key without a live version (the file serves), recorded with the version that was; nothing live is null', async () => {
    expect(await store.rules.revert({ scope: 'default', destination: 'ga4' }, 'ana', 'nothing live', T0)).to.equal(null);
    const v1 = await store.rules.publish(draft('default', 'v1'), T0);
    const other = await store.rules.publish(draft('AB12CD34', 'a'), T0);
    const r1 = await store.rules.revision();
    const change = await store.rules.revert({ scope: 'default', destination: 'ga4' }, 'bo', 'back to the file', T0 + 5);
    expect(change).to.deep.include({ version: v1.version, scope: 'default', destination: 'ga4', action: 'revert', author: 'bo', message: 'back to the file', at: T0 + 5, live: false });
    expect(await store.rules.revision()).to.be.greaterThan(r1);
    expect((await store.rules.live()).map((v) => v.version)).to.deep.equal([other.version]);
    expect((await store.rules.get(v1.version))!.live).to.equal(false);
    expect((await store.rules.history({ scope: 'default', destination: 'ga4' })).map((c) => c.action)).to.deep.equal(['revert', 'publish']);
    await store.rules.revert({ scope: 'AB12CD34', destination: 'ga4' }, 'bo', 'stale', T0, { ifRevision: r1 }).then(() => expect.fail('reverted'), (e: unknown) => {
      expect(e).to.be.instanceOf(StaleRuleRevisionError);
    });
    expect(await store.rules.rollback(v1.version, 'ana', 'live again', T0 + 6)).to.deep.include({ version: v1.version, live: true });
  });

  it('publishAll: several versions in one go; a guarded write refuses a stale revision and changes nothing', async () => {
    const [a, b] = await store.rules.publishAll([draft('default', 'g'), draft('AB12CD34', 'a')], T0);
    expect([a.live, b.live]).to.deep.equal([true, true]);
    const rev = await store.rules.revision();
    let stale: unknown;
    await store.rules.publish(draft('default', 'late'), T0, { ifRevision: rev - 1 }).catch((e: unknown) => { stale = e; });
    expect(stale).to.be.instanceOf(StaleRuleRevisionError);
    await store.rules.rollback(a.version, 'ana', '', T0, { ifRevision: rev + 1 }).then(() => expect.fail('rolled back'), (e: unknown) => {
      expect(e).to.be.instanceOf(StaleRuleRevisionError);
    });
    expect(await store.rules.revision()).to.equal(rev);
    expect((await store.rules.live()).map((v) => v.version)).to.deep.equal([a.version, b.version]);
    const c = await store.rules.publish(draft('default', 'now'), T0, { ifRevision: rev });
    expect((await store.rules.live()).map((v) => v.version)).to.deep.equal([c.version, b.version]);
  });
});

describe('rule versions (PostgreSQL): several instances', function () {
  this.timeout(30_000);
  before(async function () {
    await requirePostgres(this);
  });

  it('two instances publishing the same rules at once end with exactly one live version, the newest change', async () => {
    const db = await createTestDatabase();
    const [a, b] = await Promise.all([openPostgresStore({ url: db.url }), openPostgresStore({ url: db.url })]);
    try {
      for (let i = 0; i < 10; i++) {
        const [va, vb] = await Promise.all([a.rules.publish(draft('default', `a${i}`), T0), b.rules.publish(draft('default', `b${i}`), T0)]);
        const live = await b.rules.live();
        expect(live, `round ${i}`).to.have.length(1);
        const [newest] = await a.rules.history({ limit: 1 });
        expect(live[0].version).to.equal(newest.version);
        expect([va.version, vb.version]).to.include(live[0].version);
      }
      expect(await a.rules.history({ limit: 1000 })).to.have.length(20);
      // Guarded at the same revision: one wins, the other is told the rules moved.
      const rev = await a.rules.revision();
      const outcomes = await Promise.allSettled([
        a.rules.publish(draft('default', 'x'), T0, { ifRevision: rev }), b.rules.publish(draft('default', 'y'), T0, { ifRevision: rev }),
      ]);
      expect(outcomes.map((o) => o.status).sort()).to.deep.equal(['fulfilled', 'rejected']);
      expect(outcomes.find((o) => o.status === 'rejected')).to.have.property('reason').that.is.instanceOf(StaleRuleRevisionError);
    } finally {
      await a.close();
      await b.close();
      await db.drop();
    }
  });
});

describe('rule versions: SQLite migration 13 (revert)', () => {
  it('keeps the history and its ids; the next change follows them, and a revert can be recorded', async () => {
    const dir = tempDir('tl-rules-mig-');
    const file = join(dir, 'old.db');
    const db = new Database(file);
    for (const [i, sql] of MIGRATIONS.slice(0, 12).entries()) {
      db.exec(sql);
      db.pragma(`user_version = ${i + 1}`);
    }
    db.prepare(`INSERT INTO rule_versions (scope, destination, document, author, message, created_at) VALUES ('default', 'ga4', ?, 'ana', 'v1', 1)`).run(JSON.stringify(doc('v1')));
    db.prepare(`INSERT INTO rule_live (scope, destination, version) VALUES ('default', 'ga4', 1)`).run();
    const change = db.prepare(`INSERT INTO rule_changes (version, scope, destination, action, author, message, at) VALUES (1, 'default', 'ga4', ?, 'ana', 'm', ?)`);
    change.run('publish', 1);
    change.run('rollback', 2);
    db.close();
    const store = openSqliteStore({ file });
    try {
      expect(await store.rules.revision()).to.equal(2);
      expect((await store.rules.history({})).map((c) => [c.id, c.action])).to.deep.equal([[2, 'rollback'], [1, 'publish']]);
      const reverted = await store.rules.revert({ scope: 'default', destination: 'ga4' }, 'bo', 'file', T0);
      expect(reverted).to.deep.include({ id: 3, action: 'revert', version: 1 });
      expect(await store.rules.live()).to.deep.equal([]);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
