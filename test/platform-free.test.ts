// The core names no destination platform: what it does must not depend on one, so a
// platform's formats, cookies and quirks live in its plugin folder and a new destination is
// one new folder. Every file under src/ is read: code for its names, strings, templates and
// regexes (comments and *.md docs may use destination types as examples), the console's
// HTML and CSS as text. The few names the core must keep are listed below, each with why.
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { shippedPlugins } from './helpers/shipped-plugins.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = join(ROOT, 'src');

/** Platforms, their products and their own cookie or click-id names, as whole words. */
const PLATFORM_WORDS = [
  'google', 'googleads', 'adwords', 'gads', 'ga', 'ga4', 'gtag', 'gclid', 'gbraid', 'wbraid', 'youtube',
  'meta', 'facebook', 'fb', 'fbp', 'fbc', 'fbclid', 'instagram', 'whatsapp', 'capi',
  'tiktok', 'ttclid', 'ttp', 'pinterest', 'epik', 'snapchat', 'snap', 'sccid', 'scid', 'linkedin',
  'microsoft', 'bing', 'msclkid', 'uet', 'twitter', 'reddit', 'rdt', 'quora', 'criteo', 'taboola', 'outbrain',
];

/**
 * The webhook plugin is the generic protocol tracklane itself speaks (its intake is a tracking
 * webhook), not a platform; every other plugin's name is one.
 */
const NOT_A_PLATFORM = new Set(['webhook']);

/** Syntax that contains a platform word without naming one: `import.meta`, HTML's `<meta>`. */
const SYNTAX: readonly RegExp[] = [/\bimport\.meta\b/g, /<\/?meta\b/gi];

/** The platform names the core keeps, each with why; an entry nothing matches any more must go. */
const ALLOWED: readonly { file: string; text: string; why: string }[] = [
  { file: 'src/identifiers/us-states.ts', text: 'ga', why: "Georgia's two-letter code in the table of US state names the region normaliser reads" },
  { file: 'src/delivery/ssrf-guard.ts', text: 'metadata.google.internal', why: "Google Cloud's instance-metadata host, refused as a destination address like `metadata` and `instance-data` (a cloud, not an ad platform)" },
];

/** `google_ads` → google, ads; `metaCapi` → meta, capi; `metadata` stays one word. */
export function wordsOf(text: string): string[] {
  return text.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase().split(/[^a-z0-9]+/).filter((w) => w !== '');
}

/** Each phrase is a run of words (`['li', 'fat', 'id']` from `li_fat_id`). */
type Phrase = readonly string[];

/** Whether `text`, its syntax set aside, contains one of `phrases` as consecutive words. */
function namesPlatform(text: string, phrases: readonly Phrase[]): boolean {
  const words = wordsOf(SYNTAX.reduce((t, re) => t.replace(re, ' '), text));
  return phrases.some((p) => words.some((_, i) => p.every((w, j) => words[i + j] === w)));
}

export interface Finding { file: string; line: number; text: string }

/** Every identifier or literal of a TypeScript or JavaScript `source` that names a platform. */
export function codeFindings(file: string, source: string, phrases: readonly Phrase[]): Finding[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const found: Finding[] = [];
  const visit = (node: ts.Node): void => {
    const text = ts.isIdentifier(node) && ts.isMetaProperty(node.parent) ? undefined
      : ts.isIdentifier(node) || ts.isPrivateIdentifier(node) || ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node) ||
        ts.isRegularExpressionLiteral(node) ? node.text : undefined;
    if (text !== undefined && namesPlatform(text, phrases)) {
      found.push({ file, line: sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1, text: text.slice(0, 80) });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

/** Every line of an HTML or CSS `source`, comments blanked, that names a platform. */
export function textFindings(file: string, source: string, phrases: readonly Phrase[]): Finding[] {
  const blanked = source.replace(/<!--[\s\S]*?-->|\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' '));
  return blanked.split('\n').flatMap((text, i) => (namesPlatform(text, phrases) ? [{ file, line: i + 1, text: text.trim().slice(0, 80) }] : []));
}

const CODE = new Set(['.ts', '.cts', '.js', '.cjs', '.mjs']);
const TEXT = new Set(['.html', '.css', '.json']);
const DOCS = new Set(['.md']);
/** A file's kind: a scaffold's template (`index.ts.tmpl`, src/scaffold-template.ts) is read as the file it becomes. */
const kindOf = (file: string): string => extname(file.endsWith('.tmpl') ? file.slice(0, -'.tmpl'.length) : file);

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? filesUnder(path) : [path];
  });
}

/** The platform words, and the names, cookies and URL parameters the shipped plugins declare. */
async function platformPhrases(): Promise<Phrase[]> {
  const phrases: Phrase[] = PLATFORM_WORDS.map((w) => [w]);
  for (const [name, { plugin }] of await shippedPlugins()) {
    if (NOT_A_PLATFORM.has(name)) continue;
    phrases.push(wordsOf(name));
    for (const sources of Object.values(plugin.attribution?.ids ?? {})) {
      for (const s of sources) phrases.push(wordsOf(s.cookie ?? s.param ?? ''));
    }
  }
  return phrases.filter((p) => p.length > 0);
}

const show = (f: Finding) => `${relative(ROOT, f.file)}:${f.line}: ${JSON.stringify(f.text)}`;

describe('src/ names no platform', () => {
  let phrases: Phrase[];
  before(async () => { phrases = await platformPhrases(); });

  it('finds platform names in names, strings, templates and regexes, not in comments, syntax or longer words', () => {
    const src = [
      '// a ga4 comment',
      "const format = 'google_ads';",
      'const metaCapi = 1;',
      'const t = `x ${format} tiktok`;',
      'const r = /fbclid=/;',
      "const fine = { metadata: 'gallery', average: 1, url: import.meta.url, code: `new URL('.', import.meta.url)` };",
      "const cookie = '_scid', param = 'li_fat_id', lone = 'fat';",
    ].join('\n');
    const found = codeFindings('x.ts', src, [...phrases, ['scid'], ['li', 'fat', 'id']]).map((f) => `${f.line}: ${JSON.stringify(f.text)}`);
    expect(found).to.deep.equal(['2: "google_ads"', '3: "metaCapi"', '4: " tiktok"', '5: "/fbclid=/"', '7: "_scid"', '7: "li_fat_id"']);
    const html = '<meta charset="utf-8">\n<!-- tiktok -->\n<p class="ga4">x</p>\n/* bing */ .metadata { }';
    expect(textFindings('x.html', html, phrases).map((f) => f.line)).to.deep.equal([3]);
  });

  it('reads the names, cookies and click ids of every shipped platform plugin', () => {
    const of = (text: string) => namesPlatform(text, phrases);
    expect(['google-ads', 'meta_capi', 'PinterestSettings', '_gcl_aw', '_ttp'].filter(of)).to.have.length(5);
    expect(['webhook', 'send_webhook', 'metadata', 'gallery', 'snapshot', 'average'].filter(of)).to.deep.equal([]);
  });

  it('in any file under src/, apart from the names listed with a reason', () => {
    const files = filesUnder(SRC);
    const unread = files.filter((f) => !CODE.has(kindOf(f)) && !TEXT.has(kindOf(f)) && !DOCS.has(kindOf(f)));
    expect(unread.map((f) => relative(ROOT, f)), 'files of a kind this test does not read').to.deep.equal([]);
    const found = files.flatMap((f) => {
      const source = readFileSync(f, 'utf8');
      return CODE.has(kindOf(f)) ? codeFindings(f, source, phrases) : TEXT.has(kindOf(f)) ? textFindings(f, source, phrases) : [];
    });
    const allowed = (f: Finding) => ALLOWED.some((a) => a.file === relative(ROOT, f.file) && a.text === f.text);
    expect(found.filter((f) => !allowed(f)).map(show), 'platform names in the core: move the format into its plugin, or give it a neutral name')
      .to.deep.equal([]);
    const stale = ALLOWED.filter((a) => !found.some((f) => a.file === relative(ROOT, f.file) && a.text === f.text));
    expect(stale.map((a) => `${a.file}: ${a.text}`), 'listed names no longer in src/: remove them from ALLOWED').to.deep.equal([]);
  });
});
