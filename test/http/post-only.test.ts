// The intake routes take POST only: every other method, on every intake path, is answered
// 405 METHOD_NOT_ALLOWED with Allow: POST, before credentials or the body are looked at.
import { expect } from 'chai';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { BATCH_PATH } from '../../src/http/batch-route.ts';

describe('http: POST-only intake routes', () => {
  let s: TestApp;
  before(async () => (s = await startTestApp()));
  after(() => s.close());

  const paths = [...Object.values(INTAKE_PATHS), BATCH_PATH];
  for (const path of paths) {
    it(`${path}: 405 with Allow: POST for GET, HEAD, OPTIONS, PUT, PATCH, DELETE and PROPFIND, without credentials`, async () => {
      for (const method of ['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'DELETE', 'PROPFIND']) {
        const r = await s.post(path, {}, { method });
        expect(r.status, method).to.equal(405);
        expect(r.headers.get('allow'), method).to.equal('POST');
        if (method !== 'HEAD') expect(r.text, method).to.include('METHOD_NOT_ALLOWED');
      }
    });
  }

  it('POST still reaches the route (no credentials: 401, not 405)', async () => {
    for (const path of paths) expect((await s.post(path, {})).status, path).to.equal(401);
  });
});
