// Plugins and custom endpoints reach the service only through `tracklane/sdk` and
// `tracklane/sdk/testing` (docs/sdk.md): every file under plugins/ and customers/ (code, and the
// code blocks of their READMEs) is read, and any import of a file under src/, test/ or dist/
// fails, however it is spelled — a relative path, an absolute path or file: URL, import(),
// require(), require.resolve, import.meta.resolve, a path built at run time, a package path
// into tracklane other than the two entries.
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { ROOT } from '../helpers/spawn-server.ts';
import { forbiddenImports } from './import-scan.ts';

const CODE = /\.(ts|mts|cts|tsx|js|mjs|cjs|jsx)$/;

/** The TypeScript and JavaScript code blocks of a Markdown file, each with the line it starts on. */
function codeBlocks(markdown: string): { line: number; code: string }[] {
  const blocks: { line: number; code: string }[] = [];
  const re = /^```(ts|typescript|js|javascript|mjs|cjs)\s*\n([\s\S]*?)^```/gm;
  for (const m of markdown.matchAll(re)) blocks.push({ line: markdown.slice(0, m.index).split('\n').length, code: m[2] });
  return blocks;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((p) => !p.split('/').some((seg) => seg.startsWith('.') || seg === 'node_modules'))
    .map((p) => join(dir, p));
}

/** Every forbidden import under plugins/ and customers/, as `path:line: specifier: why`. */
function scanExtensions(): { scanned: number; problems: string[] } {
  let scanned = 0;
  const problems: string[] = [];
  for (const folder of ['plugins', 'customers']) {
    for (const file of filesUnder(join(ROOT, folder))) {
      const shown = relative(ROOT, file);
      if (CODE.test(file)) {
        scanned++;
        problems.push(...forbiddenImports(file, readFileSync(file, 'utf8')).map((p) => `${shown}:${p}`));
      } else if (file.endsWith('.md')) {
        for (const block of codeBlocks(readFileSync(file, 'utf8'))) {
          scanned++;
          problems.push(...forbiddenImports(join(dirname(file), 'README-block.ts'), block.code).map((p) => `${shown} (code block at line ${block.line}):${p}`));
        }
      }
    }
  }
  return { scanned, problems };
}

describe('tracklane/sdk: plugins and custom endpoints import only the SDK', () => {
  it('no file under plugins/ or customers/ imports a file under src/, test/ or dist/', () => {
    const { scanned, problems } = scanExtensions();
    expect(scanned, 'files read').to.be.greaterThan(100);
    expect(problems).to.deep.equal([]);
  });

  describe('the scan catches every spelling', () => {
    const plugin = join(ROOT, 'plugins/some-platform/build-requests.ts');
    const endpoint = join(ROOT, 'customers/acme/endpoints/lead-sync/versions/1/handler.ts');
    const caught: [string, string, string][] = [
      ['a relative import into src/', plugin, `import { chunk } from '../../src/destinations/chunk.ts';`],
      ['a type-only import into src/', plugin, `import type { DestinationPlugin } from '../../src/destinations/types.ts';`],
      ['a re-export from src/', plugin, `export { chunk } from '../../src/destinations/chunk.ts';`],
      ['a side-effect import of test/', plugin, `import '../../test/helpers/hermetic.ts';`],
      ['a deeper relative path from an endpoint version', endpoint, `import { customValidationError } from '../../../../../../src/customers/custom-validation-error.ts';`],
      ['a path that wanders out and back', plugin, `import x from '../some-platform/../../src/config.ts';`],
      ['an absolute path', plugin, `import { loadConfig } from '${join(ROOT, 'src/config.ts')}';`],
      ['an absolute path outside this checkout', plugin, `import x from '/opt/tracklane/src/config.ts';`],
      ['a file: URL', plugin, `import x from 'file://${join(ROOT, 'src/config.ts')}';`],
      ['a dynamic import()', plugin, `const m = await import('../../src/config.ts');`],
      ['a dynamic import() of a template literal', plugin, 'const m = await import(`../../src/config.ts`);'],
      ['a dynamic import() of a path built at run time', plugin, `const m = await import(new URL('x.ts', import.meta.url).href);`],
      ['require()', plugin, `const { chunk } = require('../../src/destinations/chunk.ts');`],
      ['require() of a computed path', plugin, `const m = require(dir + '/x');`],
      ['require.resolve()', plugin, `const p = require.resolve('../../test/helpers/test-server.ts');`],
      ['import.meta.resolve()', plugin, `const p = import.meta.resolve('../../src/config.ts');`],
      ['import x = require()', plugin, `import x = require('../../src/config.ts');`],
      ['createRequire with a path into src/', plugin, `const req = createRequire(import.meta.url); const m = req('../../src/config.ts');`],
      ['a URL naming a file under test/', plugin, `const u = new URL('../../test/helpers/test-server.ts', import.meta.url);`],
      ['the package by another path', plugin, `import x from 'tracklane/src/config.ts';`],
      ['the bare package', plugin, `import x from 'tracklane';`],
      ['the build', plugin, `import { chunk } from '../../dist/src/destinations/chunk.js';`],
    ];
    for (const [what, file, code] of caught) {
      it(`catches ${what}`, () => expect(forbiddenImports(file, code), code).to.have.length.greaterThan(0));
    }

    const allowed: [string, string][] = [
      ['the SDK', `import { chunk, type BuildInput } from 'tracklane/sdk';`],
      ['the SDK test harness', `import { goldenHarness } from 'tracklane/sdk/testing';`],
      ['its own files', `import { settingsSchema } from './settings.ts';`],
      ['a package', `import { expect } from 'chai';`],
      ['a node module', `import { createHash } from 'node:crypto';`],
      ['a file of its own folder by URL', `const rules = readFileSync(new URL('./rules.json', import.meta.url), 'utf8');`],
      ['a dynamic import of the SDK', `const sdk = await import('tracklane/sdk');`],
    ];
    for (const [what, code] of allowed) {
      it(`allows ${what}`, () => expect(forbiddenImports(plugin, code), code).to.deep.equal([]));
    }
  });
});
