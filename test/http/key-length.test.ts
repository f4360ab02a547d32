// A 400,000-character key is refused at the door with a coded error, before validation
// or storage; nothing is stored.
import { expect } from 'chai';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

describe('http: object key length', () => {
  let s: TestApp;
  before(async () => (s = await startTestApp()));
  after(async () => s.close());

  it('endpoint 1 answers 400 INVALID_BODY naming the parent path, and stores nothing', async () => {
    const account = await s.account();
    const body = {
      event: { name: 'lead_created', id: 'L-KEY', properties: { ['x'.repeat(400_000)]: 'v' } },
      context: { environment: 'prod', data_source: 'crm' },
    };
    const r = await s.post(INTAKE_PATHS.event, body, { account });
    expect(r.status).to.equal(400);
    expect(r.text).to.contain('INVALID_BODY');
    expect(r.text).to.contain('event.properties has a key longer than 256 characters');
    expect(r.text.length, 'the answer does not echo the key').to.be.below(2_000);
    expect(await s.running.store.events.list({ scriptId: account.scriptId, limit: 10 })).to.deep.equal([]);
  });
});
