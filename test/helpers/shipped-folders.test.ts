// What the test servers load as rules/, customers/ and plugins/: what the repository tracks,
// whatever an operator has added beside it (a scaffolded customer, a plugin of their own, a
// rule file), worked out on a throwaway git checkout.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PROJECT_ROOT, shippedFoldersOf, subfolderNames } from './shipped-folders.ts';
import { tempDir } from './test-server.ts';

describe('test helpers: the shipped rules, customers and plugins folders', () => {
  let root: string;
  const write = (path: string, text = '{}') => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, stdio: 'ignore' });
  const filesIn = (dir: string) => readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();

  beforeEach(() => {
    root = realpathSync(tempDir('tl-shipped-test-'));
    write('plugins/webhook/index.ts', 'export default {};');
    write('customers/demo/endpoints/order-sync/schema.json');
    write('rules/README.md', '# rules');
    git('init', '-q');
    git('add', 'plugins', 'customers', 'rules');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('are the folders themselves while they hold only what git tracks', () => {
    const f = shippedFoldersOf(root);
    expect(f).to.include({ rulesDir: join(root, 'rules'), customersDir: join(root, 'customers'), pluginsDir: join(root, 'plugins') });
    f.remove();
    expect(existsSync(join(root, 'plugins/webhook/index.ts'))).to.equal(true);
  });

  it("leave out an operator's untracked customer, plugin and rule files, and remove() leaves the real folders alone", () => {
    write('customers/acme/endpoints/lead-sync/schema.json', '{"type": "nope"}');
    write('plugins/my-hook/index.ts', 'export default {};');
    write('rules/ga4.json');
    write('rules/accounts/AB12CD34/webhook.json');
    const f = shippedFoldersOf(root);
    expect(subfolderNames(f.customersDir)).to.deep.equal(['demo']);
    expect(subfolderNames(f.pluginsDir)).to.deep.equal(['webhook']);
    expect(realpathSync(join(f.pluginsDir, 'webhook'))).to.equal(join(root, 'plugins/webhook'));
    expect(existsSync(join(f.customersDir, 'demo/endpoints/order-sync/schema.json'))).to.equal(true);
    expect(filesIn(f.rulesDir)).to.deep.equal(['README.md']);
    f.remove();
    for (const dir of [f.rulesDir, f.customersDir, f.pluginsDir]) expect(existsSync(dir), dir).to.equal(false);
    expect(filesIn(join(root, 'plugins'))).to.include('webhook/index.ts').and.include('my-hook/index.ts');
    expect(filesIn(join(root, 'customers'))).to.include('demo/endpoints/order-sync/schema.json');
  });

  it('leave out a plugin folder whose tracked files were deleted, as mocha\'s list of tests does', () => {
    write('plugins/old-platform/index.ts', 'export default {};');
    git('add', 'plugins/old-platform');
    rmSync(join(root, 'plugins/old-platform/index.ts'));
    write('plugins/old-platform/notes.ts', 'export default {};');
    const f = shippedFoldersOf(root);
    expect(subfolderNames(f.pluginsDir)).to.deep.equal(['webhook']);
    f.remove();
  });

  it('count a folder once it is git added, and ignore dot folders', () => {
    write('plugins/new-platform/index.ts', 'export default {};');
    write('plugins/.cache/x');
    git('add', 'plugins/new-platform');
    const f = shippedFoldersOf(root);
    expect(f.pluginsDir).to.equal(join(root, 'plugins'));
    f.remove();
  });

  it('outside a git checkout, or below the top of one, are the folders as they are', () => {
    rmSync(join(root, '.git'), { recursive: true });
    write('plugins/my-hook/index.ts');
    expect(shippedFoldersOf(root).pluginsDir).to.equal(join(root, 'plugins'));
    git('init', '-q');
    mkdirSync(join(root, 'sub/plugins/my-hook'), { recursive: true });
    expect(shippedFoldersOf(join(root, 'sub')).pluginsDir).to.equal(join(root, 'sub/plugins'));
  });

  it("npm test's mocha runs the plugin and customer tests git tracks, not those in folders an operator added", () => {
    // The real config and root hook, in this throwaway checkout; each test file names itself.
    for (const f of ['.mocharc.cjs', 'src/sdk/testing/tracked-files.cjs', 'test/helpers/hermetic.ts', 'test/helpers/run-end.ts', 'test/helpers/service-variables.ts', 'test/helpers/no-settings.env']) {
      write(f, readFileSync(join(PROJECT_ROOT, f), 'utf8'));
    }
    symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(root, 'node_modules'));
    const test = (title: string) => `it(${JSON.stringify(title)}, () => {});\n`;
    write('test/unit.test.ts', test('test/unit'));
    write('customers/demo/endpoints/order-sync/order-sync.test.ts', test('shipped customer'));
    write('plugins/webhook/webhook.test.ts', test('shipped plugin'));
    git('add', 'customers', 'plugins');
    write('customers/acme/endpoints/lead-sync/lead-sync.test.ts', test('added customer'));
    write('customers/demo/endpoints/order-sync/draft.test.ts', test('added test file'));
    write('plugins/my-hook/my-hook.test.ts', test('added plugin'));
    const out = execFileSync(process.execPath, [join(PROJECT_ROOT, 'node_modules/mocha/bin/mocha.js'), '--reporter', 'json'], { cwd: root, encoding: 'utf8' });
    const ran = (JSON.parse(out) as { tests: { title: string }[] }).tests.map((t) => t.title).sort();
    expect(ran).to.deep.equal(['shipped customer', 'shipped plugin', 'test/unit']);
  });
});
