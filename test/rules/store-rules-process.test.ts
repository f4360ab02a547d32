// A real server process (main thread and delivery thread) on SQLite: rules invalid at start
// because of one account file, fixed by publishing that place to the store from another
// connection (as the CLI or another instance would). Both threads serve it within 2 s and
// /readyz is no longer degraded.
import { expect } from 'chai';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { publishRules } from '../../src/rules/rule-versions.ts';
import { spawnServer, type SpawnedServer } from '../helpers/spawn-server.ts';
import { tempDir, waitFor } from '../helpers/test-server.ts';

describe('rules: a real process picks a published version up on both threads', function () {
  this.timeout(30_000);
  let server: SpawnedServer | undefined;
  let dir = '';
  let data = '';
  before(() => {
    dir = tempDir('tl-rules-');
    data = tempDir('tl-data-');
  });
  after(async () => {
    server?.child.kill('SIGTERM');
    await server?.exited;
    for (const d of [dir, data]) rmSync(d, { recursive: true, force: true });
  });

  it('invalid at start, fixed by a publish: served by both threads within 2 s', async () => {
    writeFileSync(join(dir, 'ga4.json'), JSON.stringify({ destination: 'ga4', rules: [{ id: 'ga4.page', event: '*', output: { name: 'page_view' } }] }));
    mkdirSync(join(dir, 'accounts', 'AB12CD34'), { recursive: true });
    writeFileSync(join(dir, 'accounts', 'AB12CD34', 'ga4.json'), JSON.stringify({ destination: 'ga4', rules: [{ id: 'ga4.nope', disabled: true }] }));
    server = await spawnServer({ RULES_DIR: dir, DATA_DIR: data });
    const s = server;
    const reloads = () => s.output().split('\n').filter((l) => l.includes('"msg":"rules reloaded"'));
    expect(s.output()).to.contain('RULES INVALID AT START');
    const degraded = async () => ((await (await fetch(`${s.url}/readyz`)).json()) as { degraded?: string[] }).degraded ?? [];
    expect((await degraded())[0]).to.match(/^rules invalid since start/);
    // The server listens before its delivery thread is up: publish once both threads run.
    expect(await waitFor(() => s.output().includes('"msg":"delivery started"'), 20_000), s.output()).to.equal(true);

    const store = openSqliteStore({ file: join(data, 'tracklane.db'), writerThread: false });
    try {
      const r = await publishRules({ store: store.rules, dir }, {
        scope: 'AB12CD34', destination: 'ga4', document: { destination: 'ga4', rules: [{ id: 'ga4.page', disabled: true }] }, author: 'test', message: 'fix',
      }, Date.now());
      expect(r.ok, JSON.stringify(r)).to.equal(true);
    } finally {
      await store.close();
    }
    expect(await waitFor(() => reloads().length >= 2, 2_000, 20), `both threads reload within 2 s:\n${s.output()}`).to.equal(true);
    const lines = reloads().map((l) => JSON.parse(l) as { thread?: string; revision: number });
    expect(lines.map((l) => l.thread ?? 'main').sort()).to.deep.equal(['delivery', 'main']);
    expect(lines.every((l) => l.revision === 1)).to.equal(true);
    expect(await degraded()).to.deep.equal([]);
  });
});
