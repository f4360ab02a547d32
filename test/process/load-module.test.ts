// loadModule: a TypeScript file loaded at run time (a plugin's index.ts, a custom endpoint's
// handler.ts) loads, and loads anew when asked, both under tsx's ESM loader (this process,
// like the CLI) and under its require hook alone (npm start's src/index.cjs), where
// import() has no loader for `.ts` files.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadModule } from '../../src/load-module.ts';
import { ROOT } from '../helpers/spawn-server.ts';
import { tempDir } from '../helpers/test-server.ts';

const handler = (n: number) => `export default function handler(): number {\n  return ${n};\n}\n`;

/** A handler.ts in a folder with or without a `"type": "module"` package.json. */
function handlerFile(esm: boolean): string {
  const dir = tempDir('tl-load-');
  if (esm) writeFileSync(join(dir, 'package.json'), '{"type": "module"}\n');
  mkdirSync(join(dir, 'h'));
  const file = join(dir, 'h', 'handler.ts');
  writeFileSync(file, handler(1));
  return file;
}

/** Runs `script` (CommonJS) in a node process that has only tsx's require hook, and returns its stdout. */
function underRequireHook(script: string): Promise<string> {
  const child = spawn(process.execPath, ['-e', `require(${JSON.stringify(join(ROOT, 'node_modules/tsx/dist/cjs/index.cjs'))});\n${script}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => child.once('exit', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`exit ${code}: ${err}`)))));
}

describe('process: loadModule under either tsx loader', () => {
  for (const esm of [true, false]) {
    it(`under the ESM loader: loads a handler, and with a new version loads its new text (${esm ? '"type": "module"' : 'no package.json'})`, async () => {
      const file = handlerFile(esm);
      const first = (await loadModule(file, 'v1')) as { default: () => number };
      expect(first.default()).to.equal(1);
      writeFileSync(file, handler(2));
      const second = (await loadModule(file, 'v2')) as { default: () => number };
      expect(second.default()).to.equal(2);
    });

    it(`under the require hook alone: the same (${esm ? '"type": "module"' : 'no package.json'})`, async function () {
      this.timeout(20_000);
      const file = handlerFile(esm);
      const out = await underRequireHook(`
        const { loadModule } = require(${JSON.stringify(join(ROOT, 'src/load-module.ts'))});
        const { writeFileSync } = require('node:fs');
        const file = ${JSON.stringify(file)};
        (async () => {
          const a = (await loadModule(file, 'v1')).default();
          writeFileSync(file, ${JSON.stringify(handler(2))});
          const b = (await loadModule(file, 'v2')).default();
          console.log(JSON.stringify([a, b]));
        })().catch((e) => { console.error(e); process.exit(1); });`);
      expect(JSON.parse(out)).to.deep.equal([1, 2]);
    });
  }

  it('under the require hook alone: loads a destination plugin', async function () {
    this.timeout(20_000);
    const out = await underRequireHook(`
      const { loadModule } = require(${JSON.stringify(join(ROOT, 'src/load-module.ts'))});
      loadModule(${JSON.stringify(join(ROOT, 'plugins/webhook/index.ts'))})
        .then((m) => console.log(JSON.stringify({ type: typeof m.default, build: typeof m.default.buildRequests })))
        .catch((e) => { console.error(e); process.exit(1); });`);
    expect(JSON.parse(out)).to.deep.equal({ type: 'object', build: 'function' });
  });
});
