// docs/sdk.md is the SDK's contract: every name the entries export is documented there, and
// every name documented there is exported, so neither can change without the other.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { ROOT } from '../helpers/spawn-server.ts';

/** The names a module exports, types included, read from its source. */
function exportedNames(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022);
  const names: string[] = [];
  for (const st of source.statements) {
    if (ts.isExportDeclaration(st) && st.exportClause && ts.isNamedExports(st.exportClause)) names.push(...st.exportClause.elements.map((e) => e.name.text));
    else if (ts.canHaveModifiers(st) && ts.getModifiers(st)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) {
      if (ts.isVariableStatement(st)) names.push(...st.declarationList.declarations.map((d) => d.name.getText(source)));
      else if ('name' in st && st.name && ts.isIdentifier(st.name as ts.Node)) names.push((st.name as ts.Identifier).text);
    }
  }
  return names.sort();
}

/** The names in the first column of the tables under `## heading`s of docs/sdk.md, for one entry (before the "testing" part or in it). */
function documentedNames(part: 'sdk' | 'testing'): string[] {
  const text = readFileSync(join(ROOT, 'docs/sdk.md'), 'utf8');
  const at = text.indexOf('\n## Testing');
  const section = part === 'sdk' ? (at < 0 ? text : text.slice(0, at)) : (at < 0 ? '' : text.slice(at));
  const names = new Set<string>();
  for (const line of section.split('\n')) {
    const cell = /^\| ([^|]+) \|/.exec(line)?.[1];
    if (cell === undefined || cell.trim() === 'Name' || /^-+$/.test(cell.trim())) continue;
    for (const m of cell.matchAll(/`([A-Za-z_$][\w$]*)/g)) names.add(m[1]);
  }
  return [...names].sort();
}

describe('tracklane/sdk: docs/sdk.md and the entries', () => {
  it('document exactly the names the entry exports', () => {
    expect(documentedNames('sdk')).to.deep.equal(exportedNames(join(ROOT, 'src/sdk/index.ts')));
  });

  it('document exactly the names the test harness exports', () => {
    expect(documentedNames('testing')).to.deep.equal(exportedNames(join(ROOT, 'src/sdk/testing.ts')));
  });
});
