// `plugins new TYPE` and `customers new SLUG ENDPOINT` scaffold into the first folder
// PLUGINS_DIR / CUSTOMERS_DIR lists, anywhere on disk, with files that import the service only
// through the SDK: the folder loads, is listed, passes its own tests with `tracklane test`, and
// keeps doing so once moved deeper (no path back into the checkout).
import { expect } from 'chai';
import { mkdirSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { tempCli, expectFailure, type TempCli } from './run-cli.ts';
import { tempDir } from '../helpers/test-server.ts';
import { forbiddenImports } from '../sdk/import-scan.ts';

/** Every TypeScript file of `folder`, and what the import scan finds wrong in each (none expected). */
function importProblems(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'))
    .flatMap((f) => forbiddenImports(join(folder, f), readFileSync(join(folder, f), 'utf8')).map((p) => `${f}:${p}`));
}

describe('cli: plugins new and customers new scaffold anywhere, importing only the SDK', function () {
  this.timeout(180_000);
  let cli: TempCli;
  let plugins: string;
  let customers: string;
  before(() => {
    plugins = join(tempDir('tl-operator-'), 'acme-plugins');
    customers = join(tempDir('tl-operator-'), 'acme-customers');
    cli = tempCli({ env: { PLUGINS_DIR: `${plugins}:${tempDir('tl-second-')}`, CUSTOMERS_DIR: customers } });
  });
  after(() => cli.remove());

  it('plugins new writes a destination into the first PLUGINS_DIR folder that loads, is listed and passes its own tests, also moved deeper', async () => {
    const made = await cli.json<{ type: string; folder: string; files: string[] }>('plugins', 'new', 'acme-ads');
    const folder = join(plugins, 'acme-ads');
    expect(made).to.deep.equal({
      type: 'acme-ads', folder,
      files: ['index.ts', 'settings.ts', 'native-schema.ts', 'rules.json', 'build-requests.ts', 'classify-response.ts', 'example-settings.ts',
        'golden.test.ts', 'acme-ads.test.ts', 'README.md'],
    });
    expect(JSON.parse(readFileSync(join(plugins, 'package.json'), 'utf8')), 'outside the package: declared ES modules').to.deep.equal({ private: true, type: 'module' });
    expect(importProblems(folder)).to.deep.equal([]);
    const readme = readFileSync(join(folder, 'README.md'), 'utf8');
    expect(readme).to.include('npx tracklane test <this folder>').and.include('## Example');
    const listed = await cli.json<{ name: string; folder: string }[]>('plugins', 'list');
    expect(listed.find((p) => p.name === 'acme-ads')?.folder).to.equal(folder);
    const tested = await cli.run('test', folder);
    expect(tested.code, tested.stdout + tested.stderr).to.equal(0);
    expect(tested.stdout).to.match(/11 passing/);

    const deeper = join(tempDir('tl-moved-'), 'repo', 'destinations');
    mkdirSync(deeper, { recursive: true });
    renameSync(plugins, join(deeper, 'plugins'));
    const moved = await cli.run('test', join(deeper, 'plugins', 'acme-ads'));
    expect(moved.code, moved.stdout + moved.stderr).to.equal(0);
  });

  it('plugins new refuses a type that exists in any folder, a bad name and a missing one', async () => {
    expectFailure(await cli.run('plugins', 'new', 'webhook'), 1, /^tracklane: the plugin type "webhook" is already .*plugins\/webhook; pick another name\n$/);
    expectFailure(await cli.run('plugins', 'new', 'Acme'), 1, 'TYPE must be 2 to 40 lowercase letters, digits and dashes, starting with a letter, got "Acme"');
    const missing = await cli.run('plugins', 'new');
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.match(/^tracklane: missing TYPE\n/);
  });

  it('customers new writes into the first CUSTOMERS_DIR folder; its test passes with tracklane test, also moved deeper', async () => {
    const made = await cli.json<{ folder: string }>('customers', 'new', 'acme', 'lead-sync');
    const folder = join(customers, 'acme/endpoints/lead-sync');
    expect(made.folder).to.equal(folder);
    expect(importProblems(folder)).to.deep.equal([]);
    const deeper = join(tempDir('tl-moved-'), 'a', 'b', 'c');
    mkdirSync(deeper, { recursive: true });
    renameSync(customers, join(deeper, 'acme-customers'));
    const moved = await cli.run('test', join(deeper, 'acme-customers', 'acme', 'endpoints', 'lead-sync'));
    expect(moved.code, moved.stdout + moved.stderr).to.equal(0);
    expect(moved.stdout).to.match(/7 passing/);
  });
});
