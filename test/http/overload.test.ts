// Back-pressure through the server: with INTAKE_MAX_PENDING reached (the database's write
// lock held by another connection, so the commit in flight cannot finish), further events
// are answered 503 UNAVAILABLE with Retry-After without waiting for the lock; the waiting
// ones are stored once the lock goes, and nothing refused is stored. The refusal happens at
// the door (before authentication and body), so it costs the overloaded server next to nothing.
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { startTestServer, type TestServer, type TestAccount } from '../helpers/test-server.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { sqliteFile } from '../../src/store/open-store.ts';

const lead = (id: string) => ({ event: { name: 'lead_created', id }, context: { environment: 'prod', data_source: 'crm' } });

describe('intake under overload', () => {
  let s: TestServer;
  let a: TestAccount;
  before(async () => {
    s = await startTestServer({ INTAKE_MAX_PENDING: '1' }, { busyTimeoutMs: 10_000 });
    a = await s.account();
  });
  after(() => s.close());

  it('past the pending bound answers 503 + Retry-After at once; the queued events are stored when the lock goes', async () => {
    const locker = new Database(sqliteFile(s.config));
    locker.exec('BEGIN IMMEDIATE');
    try {
      const answers: { id: string; status: number; retryAfter: string | null }[] = [];
      const sent = ['O-1', 'O-2', 'O-3', 'O-4', 'O-5', 'O-6'].map(async (id) => {
        const r = await s.post(INTAKE_PATHS.event, lead(id), { account: a });
        answers.push({ id, status: r.status, retryAfter: r.headers.get('retry-after') });
      });
      // The refusals arrive while the lock is still held: nothing waits for it.
      const deadline = Date.now() + 8_000;
      while (answers.filter((x) => x.status === 503).length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      const refused = answers.filter((x) => x.status === 503);
      expect(refused, JSON.stringify(answers)).to.have.length(4);
      for (const r of refused) expect(r.retryAfter).to.match(/^\d+$/);
      // Refused at the door, before any work: a request with a wrong token learns only that
      // the server is busy; the test endpoint, which stores nothing, still answers.
      const stranger = await s.post(INTAKE_PATHS.event, lead('O-7'), { account: { ...a, token: 'not-the-token' } });
      expect(stranger.status, 'refused before authentication').to.equal(503);
      expect(stranger.headers.get('retry-after')).to.match(/^\d+$/);
      const batch = await s.post('/webhooks/service/events', { batch: [lead('O-8')] }, { account: a });
      expect(batch.status, 'batch intake too').to.equal(503);
      const test = await s.post(INTAKE_PATHS.test, lead('O-9'), { account: a });
      expect(test.status, 'endpoint 2 stores nothing and is not refused').to.equal(200);
      locker.exec('ROLLBACK');
      await Promise.all(sent);
      const stored = answers.filter((x) => x.status === 200).map((x) => x.id).sort();
      expect(stored).to.have.length(2);
      const rows = await s.running.store.events.list({ scriptId: a.scriptId });
      expect(rows.map((r) => r.eventId).sort()).to.deep.equal(stored);
    } finally {
      if (locker.inTransaction) locker.exec('ROLLBACK');
      locker.close();
    }
  });
});
