// `accounts update --pin-endpoint NAME=N` takes only an endpoint's name: a prototype key
// (`__proto__`, `constructor`, `prototype`) or anything that is not an endpoint folder's name
// is refused with a clear error, never "updated" while nothing changed. The account service
// the CLI calls refuses them too, whoever calls it, and keeps the pin map prototype-free.
import { expect } from 'chai';
import { expectFailure, tempCli, type TempCli } from './run-cli.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/** Names an attacker (or a typo) would try: prototype keys in every flag, and what no endpoint folder is called. */
const NOT_ENDPOINTS = ['__proto__', 'constructor', 'prototype', 'Leads', '../leads', 'leads/x', 'a b', '-leads', '__proto__ '];

describe('cli: accounts update --pin-endpoint refuses what is not an endpoint name', function () {
  this.timeout(60_000);
  let cli: TempCli;
  let id: string;
  before(async () => {
    cli = tempCli();
    id = (await cli.json<{ script_id: string }>('accounts', 'create', '--name', 'Pins', '--tier', 'CUSTOM')).script_id;
  });
  after(() => cli.remove());

  it('--pin-endpoint NAME=1 and --unpin-endpoint NAME exit 2 naming it for prototype keys and bad names; the pins stay empty', async () => {
    // The service test below tries every spelling; the CLI's own refusal is shown with the ones that matter most.
    for (const name of ['__proto__', 'constructor', 'prototype', '../leads', '-leads']) {
      // `--flag=value`, so a name starting with a dash is read as the flag's value.
      for (const [flag, value] of [['--pin-endpoint', `${name}=1`], ['--unpin-endpoint', name]]) {
        const r = await cli.run('accounts', 'update', id, `${flag}=${value}`, '--json');
        expect(r.code, r.stderr).to.equal(2);
        expect(r.stdout).to.equal('');
        expect(r.stderr.split('\n')[0]).to.equal(`tracklane: ${flag}: "${name}" is not an endpoint name: lowercase letters, digits and dashes, and not __proto__, constructor or prototype`);
      }
    }
    const shown = await cli.json<{ endpoint_pins: Record<string, number> }>('accounts', 'show', id);
    expect(shown.endpoint_pins).to.deep.equal({});
  });

  it('a valid name still reaches the folder check (the account is bound to no customer)', async () => {
    expectFailure(await cli.run('accounts', 'update', id, '--pin-endpoint', 'leads=1', '--json'), 1, /cannot pin leads: the account is bound to no customer folder/);
  });
});

describe('account service: endpoint pins', () => {
  let app: TestApp;
  before(async () => (app = await startTestApp()));
  after(() => app.close());

  it('refuses prototype keys and bad names from any caller (a parsed JSON object keeps "__proto__" as its own key)', async () => {
    const { scriptId } = await app.account();
    for (const name of NOT_ENDPOINTS) {
      const pins = JSON.parse(`{${JSON.stringify(name)}: 1}`) as Record<string, number>;
      expect(Object.keys(pins), 'the key reaches the service').to.deep.equal([name]);
      let err: Error | undefined;
      await app.accounts.update(scriptId, { pinEndpoints: pins }).catch((e: Error) => (err = e));
      expect(err?.message, name).to.match(/is not an endpoint name/);
    }
    expect((await app.running.store.accounts.get(scriptId))!.endpointPins).to.deep.equal({});
  });

  it('stores a valid pin beside the ones kept', async () => {
    const { scriptId } = await app.account();
    await app.accounts.update(scriptId, { pinEndpoints: { leads: 2 } });
    const a = await app.accounts.update(scriptId, { pinEndpoints: { orders: 1 } });
    expect(a.endpointPins).to.deep.equal({ leads: 2, orders: 1 });
    // As read back from the store, the map has no prototype: an endpoint folder named `constructor` finds no pin.
    const stored = (await app.running.store.accounts.get(scriptId))!.endpointPins;
    expect(Object.getPrototypeOf(stored)).to.equal(null);
    expect(stored.constructor).to.equal(undefined);
  });
});
