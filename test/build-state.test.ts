// Which compiled copy a module loads as (src/build-state.cjs): a shipped folder unchanged since
// the build runs from dist/, also when it is reached through a symbolic link (an operator's
// linked plugin folder, the tests' shipped folders); a folder changed since runs its sources.
import { expect } from 'chai';
import { mkdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import { tempDir } from './helpers/test-server.ts';

const require = createRequire(import.meta.url);
const { compiledCopy, buildFolder, projectRoot, BUILD_DIR, STAMP_FILE } = require('../src/build-state.cjs') as {
  compiledCopy(root: string, file: string, build?: string): string | null; buildFolder(url: string): string | null; projectRoot(url: string): string; BUILD_DIR: string; STAMP_FILE: string;
};

describe('build state: compiled copies', () => {
  let root: string;
  let links: string;
  before(() => {
    root = tempDir('tl-build-state-');
    links = tempDir('tl-build-links-');
    mkdirSync(join(root, 'plugins/hook'), { recursive: true });
    writeFileSync(join(root, 'plugins/hook/index.ts'), 'export default {};\n');
    mkdirSync(join(root, BUILD_DIR, 'plugins/hook'), { recursive: true });
    writeFileSync(join(root, BUILD_DIR, 'plugins/hook/index.js'), 'export default {};\n');
    writeFileSync(join(root, BUILD_DIR, STAMP_FILE), JSON.stringify({ started: Date.now() + 60_000 }));
    symlinkSync(join(root, 'plugins/hook'), join(links, 'hook'), 'dir');
  });
  after(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(links, { recursive: true, force: true });
  });

  it('finds the compiled copy of an unchanged folder, by its own path and through a link', () => {
    const out = join(root, BUILD_DIR, 'plugins/hook/index.js');
    expect(compiledCopy(root, join(root, 'plugins/hook/index.ts'))).to.equal(out);
    expect(compiledCopy(root, join(links, 'hook/index.ts'))).to.equal(out);
  });

  it('takes the copy from the build a process started from, which dist may no longer point at', () => {
    const older = join(root, 'dist.builds/1-1');
    mkdirSync(join(older, 'plugins/hook'), { recursive: true });
    writeFileSync(join(older, 'plugins/hook/index.js'), 'export default {};\n');
    writeFileSync(join(older, STAMP_FILE), JSON.stringify({ started: Date.now() + 60_000 }));
    expect(buildFolder(pathToFileURL(join(older, 'src/load-module.js')).href)).to.equal(older);
    expect(compiledCopy(root, join(root, 'plugins/hook/index.ts'), older)).to.equal(join(older, 'plugins/hook/index.js'));
  });

  it("sees the project root from a build's module, past the build's own package.json (which maps tracklane/sdk to its compiled SDK)", () => {
    const build = join(root, 'dist.builds/2-2');
    mkdirSync(join(build, 'src'), { recursive: true });
    writeFileSync(join(root, 'package.json'), '{"name": "tracklane"}\n');
    writeFileSync(join(build, 'package.json'), '{"name": "tracklane", "type": "module"}\n');
    expect(projectRoot(pathToFileURL(join(build, 'src/load-module.js')).href)).to.equal(root);
    expect(projectRoot(pathToFileURL(join(root, 'dist.builds/3-3.partial/src/x.js')).href)).to.equal(root);
  });

  it('has none for a folder changed since the build, or a file outside the project', () => {
    expect(compiledCopy(root, join(links, 'elsewhere.ts'))).to.equal(null);
    const later = new Date(Date.now() + 120_000);
    utimesSync(join(root, 'plugins/hook/index.ts'), later, later);
    writeFileSync(join(root, 'plugins/hook/index.ts'), 'export default { changed: true };\n');
    writeFileSync(join(root, BUILD_DIR, STAMP_FILE), JSON.stringify({ started: Date.now() - 60_000 }));
    expect(compiledCopy(root, join(root, 'plugins/hook/index.ts'))).to.equal(null);
  });
});
