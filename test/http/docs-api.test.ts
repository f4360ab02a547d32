// docs/api.md stays true to the code: every error code the service can answer, every
// warning code, every intake path and every environment variable the config reads is in it,
// and it points nowhere outside the repository.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERROR_CODES } from '../../src/errors.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { BATCH_PATH } from '../../src/http/batch-route.ts';
import { ROOT } from '../helpers/spawn-server.ts';

const doc = readFileSync(join(ROOT, 'docs/api.md'), 'utf8');

describe('docs/api.md', () => {
  it('lists every error code', () => {
    for (const code of ERROR_CODES) expect(doc, code).to.contain(`\`${code}\``);
  });

  it('lists every warning code', () => {
    const types = readFileSync(join(ROOT, 'src/schema/types.ts'), 'utf8');
    const union = types.slice(types.indexOf('export type WarningCode'), types.indexOf(';', types.indexOf('export type WarningCode')));
    const codes = [...union.matchAll(/'([A-Z_]+)'/g)].map((m) => m[1]);
    expect(codes.length).to.be.greaterThan(5);
    for (const code of [...codes, 'RESPONSE_TRUNCATED']) expect(doc, code).to.contain(`\`${code}\``);
  });

  it('names every intake path and every environment variable the configuration reads', () => {
    for (const path of [...Object.values(INTAKE_PATHS), BATCH_PATH]) expect(doc, path).to.contain(path);
    const config = readFileSync(join(ROOT, 'src/config.ts'), 'utf8');
    const vars = [...config.matchAll(/(?:str|int)\(env, '([A-Z_]+)'/g)].map((m) => m[1]);
    expect(vars.length).to.be.greaterThan(15);
    for (const v of vars) expect(doc, v).to.contain(`\`${v}\``);
  });

  it('stands on its own', () => {
    expect(doc).to.not.match(/INTERFACE\.md|\.\.\/shared|reliability\.md|destinations\.md|the spec\b/);
  });
});
