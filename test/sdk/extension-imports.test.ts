// Plugins and custom endpoints reach the service only through `tracklane/sdk` and
// `tracklane/sdk/testing` (docs/sdk.md): every file under plugins/ and customers/ (code, and the
// code blocks of their READMEs) is read, and any import of a file under src/, test/ or dist/
// fails, however it is spelled — a relative path, an absolute path or file: URL, import(),
// require(), require.resolve, import.meta.resolve, a path built at run time, a package path
// into tracklane other than the two entries.
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { ROOT } from '../helpers/spawn-server.ts';

const ENTRIES = new Set(['tracklane/sdk', 'tracklane/sdk/testing']);
const FORBIDDEN_FOLDERS = ['src', 'test', 'dist'];
const CODE = /\.(ts|mts|cts|tsx|js|mjs|cjs|jsx)$/;

/** A file path or file: URL a specifier names, or null for a package name. */
function pathOf(specifier: string, fromDir: string): string | null {
  if (specifier.startsWith('file:')) {
    try {
      return fileURLToPath(specifier);
    } catch {
      return specifier;
    }
  }
  if (isAbsolute(specifier)) return specifier;
  if (specifier.startsWith('./') || specifier.startsWith('../') || specifier === '.' || specifier === '..') return resolve(fromDir, specifier);
  return null;
}

/** What is wrong with importing `specifier` from a file in `fromDir`, or null. */
function problemWith(specifier: string, fromDir: string): string | null {
  const path = pathOf(specifier, fromDir);
  if (path === null) {
    if (specifier === 'tracklane' || specifier.startsWith('tracklane/')) return ENTRIES.has(specifier) ? null : 'tracklane is imported only as tracklane/sdk or tracklane/sdk/testing';
    return null;
  }
  if (specifier.startsWith('file:') || isAbsolute(specifier)) return 'an absolute path: import your own files relatively and the service as tracklane/sdk';
  const rel = relative(ROOT, path).split('\\').join('/');
  const top = rel.split('/')[0];
  if (!rel.startsWith('..') && FORBIDDEN_FOLDERS.includes(top)) return `reaches into ${top}/: import tracklane/sdk (or tracklane/sdk/testing in tests) instead`;
  return null;
}

const isCall = (node: ts.Node, name: string): node is ts.CallExpression =>
  ts.isCallExpression(node) && node.expression.getText() === name;

const literal = (node: ts.Node | undefined): string | null =>
  node !== undefined && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : null;

/** Every forbidden import in `text` (the source of `file`), as `line: specifier: why`. */
export function forbiddenImports(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const dir = dirname(file);
  const found: string[] = [];
  const report = (node: ts.Node, what: string, why: string) =>
    found.push(`${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${what}: ${why}`);
  const visit = (node: ts.Node): void => {
    // import … from '…', import '…', export … from '…', import x = require('…')
    const declared = ts.isImportDeclaration(node) || ts.isExportDeclaration(node) ? node.moduleSpecifier
      : ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference) ? node.moduleReference.expression : undefined;
    if (declared !== undefined) {
      const spec = literal(declared);
      const why = spec === null ? null : problemWith(spec, dir);
      if (why !== null) report(node, spec!, why);
    }
    // import('…'), require('…'), require.resolve('…'), import.meta.resolve('…'): a specifier built at run time is refused outright.
    const loading = ts.isCallExpression(node) && (node.expression.kind === ts.SyntaxKind.ImportKeyword
      || isCall(node, 'require') || isCall(node, 'require.resolve') || isCall(node, 'import.meta.resolve') || isCall(node, 'module.require'));
    if (loading) {
      const arg = (node as ts.CallExpression).arguments[0];
      const spec = literal(arg);
      if (spec === null) report(node, node.getText().slice(0, 60), 'a module path built at run time: name the module literally');
      else {
        const why = problemWith(spec, dir);
        if (why !== null) report(node, spec, why);
      }
    }
    // Any other string that names a file under src/, test/ or dist/ (passed to createRequire's require, a URL, …).
    const text = ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node) ? node.text : null;
    if (text !== null && !loading && declared === undefined && (text.startsWith('.') || text.startsWith('/') || text.startsWith('file:'))) {
      const path = pathOf(text, dir);
      const rel = path === null ? '' : relative(ROOT, path).split('\\').join('/');
      if (path !== null && !rel.startsWith('..') && FORBIDDEN_FOLDERS.includes(rel.split('/')[0]) && node.parent && !ts.isImportDeclaration(node.parent)) {
        report(node, text, `names a file under ${rel.split('/')[0]}/`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

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
