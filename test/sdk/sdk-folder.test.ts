// src/sdk/ is what plugins and custom endpoints import (`tracklane/sdk`, `tracklane/sdk/testing`)
// and nothing else: the core outside it imports none of its files (the loader's helpers, such
// as the mapping of `tracklane/sdk` for folders outside the package, live beside
// src/load-module.ts), and holds no code importing the SDK (the files the scaffolds write are
// templates of their own, src/*/templates/).
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { ROOT } from '../helpers/spawn-server.ts';

const SRC = join(ROOT, 'src');
const CODE = /\.(ts|mts|cts|js|mjs|cjs)$/;

/** Files under src/ outside src/sdk/, as paths relative to src/. */
const coreFiles = (): string[] =>
  readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((p) => CODE.test(p) && !p.startsWith('sdk/') && !p.startsWith('console/public/'));

/** The relative specifiers `text` imports, requires or registers. */
const relativeSpecifiers = (text: string): string[] =>
  [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|\bregister\s*\(\s*)(['"])(\.{1,2}\/[^'"]+)\1/g)].map((m) => m[2]);

describe('sdk: src/sdk/ holds the SDK alone', () => {
  it('no file of the core outside src/sdk/ imports one inside it', () => {
    const into = coreFiles().flatMap((p) => relativeSpecifiers(readFileSync(join(SRC, p), 'utf8'))
      .filter((spec) => relative(join(SRC, 'sdk'), resolve(dirname(join(SRC, p)), spec)).split('/')[0] !== '..')
      .map((spec) => `${p}: ${spec}`));
    expect(into).to.deep.equal([]);
  });

  it('no file of the core outside src/sdk/ holds a line importing tracklane/sdk, in a string or not', () => {
    const lines = coreFiles().flatMap((p) => readFileSync(join(SRC, p), 'utf8').split('\n')
      .flatMap((line, i) => (/^\s*(import|export)\b.*\bfrom\s*['"]tracklane\/sdk/.test(line) ? [`${p}:${i + 1}`] : [])));
    expect(lines).to.deep.equal([]);
  });
});
