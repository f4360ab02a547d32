// The import scan of test/sdk/extension-imports.test.ts, for the tests that check what a
// plugin or endpoint folder imports (the shipped ones, scaffolds): any import of a file under
// src/, test/ or dist/ of this package, however spelled, is a problem.
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { ROOT } from '../helpers/spawn-server.ts';

const ENTRIES = new Set(['tracklane/sdk', 'tracklane/sdk/testing']);
const FORBIDDEN_FOLDERS = ['src', 'test', 'dist'];

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
