// The rules engine is the core: what it does must not depend on a destination platform, so
// no name, string, template or regex in its code may name one (a platform's formats belong
// in its plugin folder). Comments may still use destination types as examples of file names.
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RULES_SRC = join(ROOT, 'src/rules');

/** Platforms, their products and their own cookie or click-id names, as whole words. */
const PLATFORM_WORDS = new Set([
  'google', 'googleads', 'adwords', 'gads', 'ga', 'ga4', 'gtag', 'gclid', 'gbraid', 'wbraid',
  'meta', 'facebook', 'fb', 'fbp', 'fbc', 'fbclid', 'instagram', 'capi',
  'tiktok', 'ttclid', 'ttp', 'pinterest', 'epik', 'snapchat', 'linkedin', 'bing', 'microsoft', 'twitter', 'reddit',
]);

/** `google_ads` → google, ads; `metaCapi` → meta, capi; `metadata` stays one word. */
export function wordsOf(text: string): string[] {
  return text.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase().split(/[^a-z0-9]+/).filter((w) => w !== '');
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? tsFiles(path) : e.name.endsWith('.ts') ? [path] : [];
  });
}

/** `file:line: text` for every identifier or literal of `source` that names a platform. */
export function platformNames(file: string, source: string): string[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    const text = ts.isIdentifier(node) || ts.isPrivateIdentifier(node) || ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node) ||
      ts.isRegularExpressionLiteral(node) ? node.text : undefined;
    if (text !== undefined && wordsOf(text).some((w) => PLATFORM_WORDS.has(w))) {
      found.push(`${relative(ROOT, file)}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}: ${JSON.stringify(text.slice(0, 80))}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

describe('src/rules names no platform', () => {
  it('finds platform names in names, strings, templates and regexes, not in comments or longer words', () => {
    const src = [
      '// a ga4 comment',
      "const format = 'google_ads';",
      'const metaCapi = 1;',
      'const t = `x ${format} tiktok`;',
      'const r = /fbclid=/;',
      "const fine = { metadata: 'gallery', average: 1 };",
    ].join('\n');
    expect(platformNames('x.ts', src).map((s) => s.replace(/^[^:]*:/, ''))).to.deep.equal([
      '2: "google_ads"', '3: "metaCapi"', '4: " tiktok"', '5: "/fbclid=/"',
    ]);
  });

  it('in any TypeScript file under src/rules', () => {
    const files = tsFiles(RULES_SRC);
    expect(files.length).to.be.greaterThan(5);
    const found = files.flatMap((f) => platformNames(f, readFileSync(f, 'utf8')));
    expect(found, 'platform names in the rules engine: give the format or operation a neutral name').to.deep.equal([]);
  });
});
