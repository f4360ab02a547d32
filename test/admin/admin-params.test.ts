// An operator's JSON body: as deep as a rule expression may be and no deeper (refused before
// it is parsed), forbidden keys refused as on intake.
import { expect } from 'chai';
import { TOKEN } from './admin-client.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/** `{"and": [{"and": [ … true … ]}]}`: `ops` operations, twice as many JSON levels. */
const deepWhen = (ops: number) => '{"and":['.repeat(ops) + 'true' + ']}'.repeat(ops);
const draft = (when: string) => `{"document":{"destination":"webhook","rules":[{"id":"deep","event":"*","when":${when},"output":{"name":"x"}}]}}`;

describe('admin API: request bodies', () => {
  let s: TestApp;
  before(async () => (s = await startTestApp({ ADMIN_TOKEN: TOKEN })));
  after(() => s.close());

  const postRaw = async (path: string, raw: string) => {
    const r = await fetch(`${s.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: raw });
    return { status: r.status, type: r.headers.get('content-type'), body: (await r.text()) };
  };

  it('refuses a deeply nested document with 400 INVALID_BODY in the plain JSON shape, on diff and check', async () => {
    for (const path of ['/admin/rules/webhook/diff', '/admin/rules/webhook/check']) {
      const r = await postRaw(path, draft(deepWhen(5_000)));
      expect(r.status, path).to.equal(400);
      expect(r.type, path).to.match(/^application\/json/);
      const body = JSON.parse(r.body);
      expect(body.error.code, path).to.equal('INVALID_BODY');
      expect(body.error.message, path).to.match(/nested deeper than 80 levels/);
    }
  });

  it('reads a rule expression past its own depth limit, so check names the rule', async () => {
    const r = await postRaw('/admin/rules/webhook/check', draft(deepWhen(35)));
    expect(r.status).to.equal(200);
    const body = JSON.parse(r.body);
    expect(body.ok).to.equal(false);
    expect(body.errors.map((e: { message: string }) => e.message).join('\n')).to.match(/RULE_TOO_DEEP/);
  });

  it('refuses __proto__ and constructor keys and non-finite numbers with 400 INVALID_BODY', async () => {
    const doc = (extra: string) => `{"document":{"destination":"webhook","rules":[]${extra}}}`;
    expect((await postRaw('/admin/rules/webhook/diff', doc(''))).status).to.equal(200);
    for (const raw of [doc(',"__proto__":{"x":1}'), doc(',"constructor":{"prototype":{}}'), doc(',"n":1e400')]) {
      const r = await postRaw('/admin/rules/webhook/diff', raw);
      expect(r.status, raw).to.equal(400);
      expect(JSON.parse(r.body).error.code, raw).to.equal('INVALID_BODY');
    }
  });
});
