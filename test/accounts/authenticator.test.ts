// The authenticator: equal database work for unknown and known script ids, and a cache
// that a spray of random ids cannot empty. Instrumented (query counts), never timed.
import { expect } from 'chai';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { createAuthenticator } from '../../src/accounts/authenticator.ts';
import { createAccountService } from '../../src/accounts/account-service.ts';
import { newScriptId } from '../../src/accounts/credentials.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/types.ts';
import { tempDir } from '../helpers/test-server.ts';

describe('accounts: authenticator', () => {
  let dir: string;
  let store: Store;
  let calls: { credentials: number };
  let counted: Store;
  beforeEach(() => {
    dir = tempDir();
    store = openSqliteStore({ file: join(dir, 'db.sqlite'), writerThread: false });
    calls = { credentials: 0 };
    const accounts = {
      ...store.accounts,
      credentials: (id: string, now: number) => (calls.credentials++, store.accounts.credentials(id, now)),
    };
    counted = { ...store, accounts } as Store;
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('does the same queries for an unknown id as for a known one with a wrong token', async () => {
    const { account, accessToken } = await createAccountService(store).create({ name: 'a', tier: 'FLEX', addon: true });
    const auth = createAuthenticator(counted);
    expect(await auth.authenticate(account.scriptId, 'tlk_wrong')).to.equal(null);
    const known = { ...calls };
    calls = { credentials: 0 };
    expect(await auth.authenticate('ZZZZZZZZ', 'tlk_wrong')).to.equal(null);
    expect(calls).to.deep.equal(known);
    expect(known).to.deep.equal({ credentials: 1 });
    expect((await auth.authenticate(account.scriptId, accessToken))?.scriptId).to.equal(account.scriptId);
  });

  it('a spray of 20,000 unknown ids leaves a known account cached (no new lookup)', async () => {
    const { account, accessToken } = await createAccountService(store).create({ name: 'a', tier: 'FLEX', addon: true });
    let t = 1_000_000;
    const auth = createAuthenticator(counted, { now: () => t, ttlMs: 60_000 });
    expect(await auth.authenticate(account.scriptId, accessToken)).to.not.equal(null);
    for (let i = 0; i < 20_000; i++) await auth.authenticate(newScriptId(), 'tlk_x');
    calls = { credentials: 0 };
    t += 1;
    expect(auth.isCachedAccount(account.scriptId)).to.equal(true);
    expect(await auth.authenticate(account.scriptId, accessToken)).to.not.equal(null);
    expect(calls, 'served from the cache').to.deep.equal({ credentials: 0 });
  });

  it('evicts the least recently used accounts first, not the whole cache', async () => {
    const svc = createAccountService(store);
    const made = [];
    for (let i = 0; i < 4; i++) made.push(await svc.create({ name: `a${i}`, tier: 'FLEX', addon: true }));
    const auth = createAuthenticator(counted, { now: () => 5, ttlMs: 60_000, maxEntries: 3 });
    for (const m of made.slice(0, 3)) await auth.authenticate(m.account.scriptId, m.accessToken);
    await auth.authenticate(made[0].account.scriptId, made[0].accessToken); // a0 is now the most recent
    await auth.authenticate(made[3].account.scriptId, made[3].accessToken); // evicts a1, the least recent
    expect(made.map((m) => auth.isCachedAccount(m.account.scriptId))).to.deep.equal([true, false, true, true]);
  });
});
