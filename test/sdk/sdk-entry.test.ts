// `tracklane/sdk` resolves wherever plugin and handler code runs: inside this package by
// Node's own self-reference (package.json "exports"), and from a folder anywhere else on disk
// loaded by the service (src/load-module.ts), under tsx's ESM loader (this process, the CLI),
// under its require hook alone (npm start's entry) and in a custom-handler worker thread.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as sdk from 'tracklane/sdk';
import { isSuccessStatus } from '../../src/destinations/http-status.ts';
import { loadModule } from '../../src/load-module.ts';
import { createHandlerPool } from '../../src/customers/handler-pool.ts';
import { ROOT } from '../helpers/spawn-server.ts';
import { tempDir } from '../helpers/test-server.ts';

/** A handler.ts in a folder of its own outside the package, importing the SDK and chai (resolved from the service). */
function outsideHandler(): string {
  const dir = tempDir('tl-sdk-outside-');
  writeFileSync(join(dir, 'package.json'), '{"type": "module"}\n');
  mkdirSync(join(dir, 'h'));
  const file = join(dir, 'h', 'handler.ts');
  writeFileSync(file, `import { customValidationError, isSuccessStatus, type CustomHandler } from 'tracklane/sdk';
import { expect } from 'chai';

const handler: CustomHandler = (body) => {
  expect(body).to.be.an('object');
  if (body.refuse) throw customValidationError('refuse', 'absent', 'refused as asked');
  return { messages: [\`204 is a success: \${isSuccessStatus(204)}\`] };
};
export default handler;
`);
  return file;
}

describe('tracklane/sdk: the entry resolves wherever plugins and handlers run', () => {
  it('inside the package, by its package name: the same modules the core runs', () => {
    expect(sdk.isSuccessStatus).to.equal(isSuccessStatus);
    expect(sdk.customValidationError('f', 'x', 'm').name).to.equal('CustomValidationError');
  });

  it('outside the package, loaded by the service under the ESM loader', async () => {
    const m = (await loadModule(outsideHandler())) as { default: (body: unknown) => { messages: string[] } };
    expect(m.default({}).messages).to.deep.equal(['204 is a success: true']);
  });

  it('outside the package, under the require hook alone (npm start from the sources)', async function () {
    this.timeout(20_000);
    const file = outsideHandler();
    const child = spawn(process.execPath, ['-e', `require('tsx/cjs');
      require(${JSON.stringify(join(ROOT, 'src/load-module.ts'))}).loadModule(${JSON.stringify(file)})
        .then((m) => console.log(JSON.stringify(m.default({}))))
        .catch((e) => { console.error(e); process.exit(1); });`], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code, err).to.equal(0);
    expect(JSON.parse(out)).to.deep.equal({ messages: ['204 is a success: true'] });
  });

  it('outside the package, in a custom-handler worker thread: runs, and its customValidationError is a 400', async function () {
    this.timeout(20_000);
    const file = outsideHandler();
    const pool = createHandlerPool({ threads: 1 });
    try {
      expect(await pool.run({ file, body: {}, ctx: {} }, 10_000)).to.deep.include({ ok: true, result: { messages: ['204 is a success: true'] } });
      expect(await pool.run({ file, body: { refuse: true }, ctx: {} }, 10_000)).to.deep.include({
        ok: false, problems: [{ field: 'refuse', expected_format: 'absent', message: 'refused as asked' }],
      });
    } finally {
      await pool.close();
    }
  });
});
