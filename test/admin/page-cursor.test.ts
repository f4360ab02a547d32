// The one cursor of the admin lists: events and deliveries page with it, and refuse anything
// that is not one with the same 400 instead of answering an empty page.
import { expect } from 'chai';
import { adminCall, lead, TOKEN } from './admin-client.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';

describe('admin API: page cursors', () => {
  let s: TestApp;
  before(async () => (s = await startTestApp({ ADMIN_TOKEN: TOKEN })));
  after(() => s.close());
  const get = (path: string) => adminCall(s.url, 'GET', path);

  it('pages events to the end with next_cursor, filters kept', async () => {
    const acc = await s.account();
    const ids = ['C-1', 'C-2', 'C-3', 'C-4', 'C-5'];
    for (const id of ids) expect((await s.post(INTAKE_PATHS.event, lead(id), { account: acc })).status).to.equal(200);
    const seen: string[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const page = await get(`/admin/events?script_id=${acc.scriptId}&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).to.equal(200);
      seen.push(...page.body.items.map((e: { event_id: string }) => e.event_id));
      cursor = page.body.next_cursor;
      expect(seen.length).to.be.at.most(ids.length);
    }
    expect(seen).to.deep.equal([...ids].reverse());
  });

  for (const list of ['events', 'deliveries']) {
    it(`/admin/${list}: 400 INVALID_VALUE naming cursor for anything that is not a cursor`, async () => {
      for (const cursor of ['garbage', '0', '-1', '1.5', '1e3', '0x10', '007', '99999999999999999999', '%2012', 'c3f1a4e0-0000-4000-8000-000000000000']) {
        const r = await get(`/admin/${list}?cursor=${cursor}`);
        expect(r.status, cursor).to.equal(400);
        expect(r.body.error, cursor).to.include({ code: 'INVALID_VALUE' });
        expect(r.body.error.message, cursor).to.match(/^cursor /);
      }
    });
  }
});
