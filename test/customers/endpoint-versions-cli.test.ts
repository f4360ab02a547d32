// The CLI side of endpoint versions: customers new-version copies the current version to the
// next (listed active, current unchanged) and loads it; accounts update --pin-endpoint takes
// only a version the account's folder serves; customers list --json shows each version with
// its pinned accounts and uses.
import { expect } from 'chai';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tempCli, type TempCli } from '../cli/run-cli.ts';
import { customersRoot, writeEndpoint } from './fixtures.ts';

describe('cli: custom endpoint versions', function () {
  this.timeout(60_000);
  let root: string;
  let cli: TempCli;
  before(() => {
    root = customersRoot();
    cli = tempCli({ env: { CUSTOMERS_DIR: root } });
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('new-version adds version 2 beside 1, pins are checked against the folder, list --json shows versions, pins and uses', async () => {
    expect((await cli.run('customers', 'new', 'acme', 'leads')).code).to.equal(0);
    const made = await cli.run('customers', 'new-version', 'acme', 'leads', '--json');
    expect(made.code, made.stderr).to.equal(0);
    const folder = join(root, 'acme/endpoints/leads');
    expect(JSON.parse(made.stdout)).to.deep.equal({
      customer: 'acme', endpoint: 'leads', version: 2, from: 1, folder: join(folder, 'versions/2'),
      files: ['versions/2/schema.json', 'versions/2/handler.ts', 'versions/2/example.json', 'endpoint.json'],
    });
    expect(JSON.parse(readFileSync(join(folder, 'endpoint.json'), 'utf8'))).to.include({ current_version: 1 })
      .and.to.have.deep.property('versions', { 2: { state: 'active' } });
    expect(readFileSync(join(folder, 'versions/2/handler.ts'), 'utf8')).to.equal(readFileSync(join(folder, 'versions/1/handler.ts'), 'utf8'));
    expect(existsSync(join(folder, 'versions/3'))).to.equal(false);

    const created = JSON.parse((await cli.run('accounts', 'create', '--name', 'Acme', '--tier', 'CUSTOM', '--json')).stdout);
    const id = created.script_id;
    const unbound = await cli.run('accounts', 'update', id, '--pin-endpoint', 'leads=1');
    expect(unbound.code).to.equal(1);
    expect(unbound.stderr).to.match(/cannot pin leads: the account is bound to no customer folder/);
    const bad = await cli.run('accounts', 'update', id, '--customer', 'acme', '--pin-endpoint', 'leads=3');
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.equal('tracklane: cannot pin leads=3: acme/leads serves versions 1 (current), 2\n');
    const ok = await cli.run('accounts', 'update', id, '--customer', 'acme', '--pin-endpoint', 'leads=2', '--json');
    expect(ok.code, ok.stderr).to.equal(0);
    expect(JSON.parse(ok.stdout).endpoint_pins).to.deep.equal({ leads: 2 });

    const listed = JSON.parse((await cli.run('customers', 'list', '--json')).stdout);
    const leads = listed.find((e: any) => e.endpoint === 'leads');
    expect(leads.current_version).to.equal(1);
    expect(leads.versions.map((v: any) => [v.version, v.state, v.pinned_accounts, v.usage])).to.deep.equal([[1, 'current', [], []], [2, 'active', [id], []]]);

    const unpinned = await cli.run('accounts', 'update', id, '--unpin-endpoint', 'leads', '--json');
    expect(JSON.parse(unpinned.stdout).endpoint_pins).to.deep.equal({});
  });

  it('binding the account to another customer (or none) drops its pins, which named the old customer\'s endpoints, and says so', async () => {
    // Two customers with an endpoint of the same name: a pin set for north/leads must not choose south/leads' version.
    writeEndpoint(root, 'north', 'leads');
    writeEndpoint(root, 'south', 'leads');
    const id = JSON.parse((await cli.run('accounts', 'create', '--name', 'Mover', '--tier', 'CUSTOM', '--json')).stdout).script_id;
    expect((await cli.run('accounts', 'update', id, '--customer', 'north', '--pin-endpoint', 'leads=1')).code).to.equal(0);
    const same = await cli.run('accounts', 'update', id, '--customer', 'north', '--json');
    expect(JSON.parse(same.stdout)).to.deep.include({ endpoint_pins: { leads: 1 }, unpinned_endpoints: {} });

    const moved = await cli.run('accounts', 'update', id, '--customer', 'south');
    expect(moved.code, moved.stderr).to.equal(0);
    expect(moved.stdout.split('\n').slice(0, 2)).to.deep.equal([
      `Updated account ${id}.`,
      "Unpinned leads=1: those pins named the previous customer's endpoints, and the account is now bound to customer south.",
    ]);
    expect(moved.stdout).to.match(/^\s*endpoint_pins\s+none$/m);

    expect((await cli.run('accounts', 'update', id, '--pin-endpoint', 'leads=1')).code).to.equal(0);
    const unbound = await cli.run('accounts', 'update', id, '--no-customer', '--json');
    expect(JSON.parse(unbound.stdout)).to.deep.include({ customer: null, endpoint_pins: {}, unpinned_endpoints: { leads: 1 } });
  });
});
