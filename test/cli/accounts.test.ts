// `tracklane accounts …`, end to end through the real executable and a real SQLite file.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { SPEC_EVENT_NAMES } from '../../src/accounts/types.ts';
import { BASE_URL, expectFailure, tempCli, type TempCli } from './run-cli.ts';

interface AccountJson {
  script_id: string; name: string; tier: string; addon: boolean; enabled: boolean; base_url: string;
  host: string | null; country: string | null; tax_rate: number | null; approved_events: string[];
  customer: string | null; consent_default: string; created_at: string; updated_at: string; access_token?: string;
}
interface Rotated { script_id: string; access_token: string; previous_token_expires_at: string }

const HOUR = 3_600_000;

describe('cli: accounts', function () {
  this.timeout(30_000);
  let cli: TempCli;
  let created: AccountJson;

  before(async () => {
    cli = tempCli();
    created = await cli.json<AccountJson>('accounts', 'create', '--name', 'Shop One', '--tier', 'pro', '--addon',
      '--host', 'https://shop.example/some/page', '--country', 'ro', '--tax-rate', '19');
  });
  after(() => cli.remove());

  describe('create', () => {
    it('prints the script id, a fresh access token and the base URL', () => {
      expect(created.script_id).to.match(/^[A-Z0-9]{8}$/);
      expect(created.access_token).to.match(/^tlk_[A-Za-z0-9_-]{32,}$/);
      expect(created.base_url).to.equal(BASE_URL);
    });

    it('stores the settings, normalised', () => {
      expect(created).to.include({ name: 'Shop One', tier: 'PRO', addon: true, enabled: true,
        host: 'https://shop.example', country: 'RO', tax_rate: 19, customer: null });
      expect(created.approved_events).to.deep.equal([...SPEC_EVENT_NAMES]);
      expect(Date.parse(created.created_at)).to.be.closeTo(Date.now(), 60_000);
      expect(created.updated_at).to.equal(created.created_at);
    });

    it('defaults to tier FLEX without the add-on', async () => {
      const a = await cli.json<AccountJson>('accounts', 'create', '--name', 'Plain');
      expect(a).to.include({ tier: 'FLEX', addon: false, host: null, country: null, tax_rate: null });
      expect(a.script_id).to.not.equal(created.script_id);
      expect(a.access_token).to.not.equal(created.access_token);
    });

    it('says in human output that the token is shown once', async () => {
      const r = await cli.run('accounts', 'create', '--name', 'Human');
      expect(r.code).to.equal(0);
      expect(r.stdout).to.match(/access_token\s+tlk_\S{32,}/);
      expect(r.stdout).to.match(/shown only this once/);
      expect(r.stdout).to.include(BASE_URL);
    });
  });

  describe('show and list', () => {
    it('show returns the account, without any token material but prefixes', async () => {
      const a = await cli.json<AccountJson & { tokens: unknown[] }>('accounts', 'show', created.script_id);
      const { access_token: _, ...expected } = created;
      expect(a).to.include(Object.fromEntries(Object.entries(expected).filter(([, v]) => v === null || typeof v !== 'object')));
      expect(a.approved_events).to.deep.equal(created.approved_events);
      expect(a).to.not.have.property('access_token');
      expect(JSON.stringify(a)).to.not.include(created.access_token!.slice(8));
      expect(JSON.stringify(a)).to.not.include(sha256(created.access_token!));
    });

    it('human show prints aligned fields and never the token or its hash', async () => {
      const r = await cli.run('accounts', 'show', created.script_id);
      expect(r.code).to.equal(0);
      expect(r.stdout).to.match(new RegExp(`^script_id\\s+${created.script_id}$`, 'm'));
      expect(r.stdout).to.match(/^tier\s+PRO$/m);
      expect(r.stdout).to.not.include(created.access_token!.slice(8));
      expect(r.stdout).to.not.include(sha256(created.access_token!));
    });

    it('list returns an array holding every account', async () => {
      const all = await cli.json<AccountJson[]>('accounts', 'list');
      expect(all).to.be.an('array');
      expect(all.map((a) => a.script_id)).to.include(created.script_id);
      const mine = all.find((a) => a.script_id === created.script_id)!;
      expect(mine).to.include({ name: 'Shop One', base_url: BASE_URL });
      for (const a of all) expect(a).to.not.have.property('access_token');
    });
  });

  describe('update', () => {
    let id: string;
    before(async () => {
      id = (await cli.json<AccountJson>('accounts', 'create', '--name', 'To Update', '--tier', 'BASIC')).script_id;
    });

    it('changes tier, add-on, enabled, host, country, tax rate, customer and name', async () => {
      const a = await cli.json<AccountJson>('accounts', 'update', id, '--tier', 'CUSTOM', '--addon', '--disable',
        '--host', 'http://b.example:8080/x', '--country', 'us', '--tax-rate', '9.5', '--customer', 'acme-shop', '--name', 'Renamed');
      expect(a).to.include({ script_id: id, name: 'Renamed', tier: 'CUSTOM', addon: true, enabled: false,
        host: 'http://b.example:8080', country: 'US', tax_rate: 9.5, customer: 'acme-shop', base_url: BASE_URL });
      expect(Date.parse(a.updated_at)).to.be.at.least(Date.parse(a.created_at));
      const shown = await cli.json<AccountJson>('accounts', 'show', id);
      expect(shown).to.include({ tier: 'CUSTOM', enabled: false, customer: 'acme-shop' });
    });

    it("reverses with --no-addon, --enable, and clears host, country and tax rate with ''", async () => {
      const a = await cli.json<AccountJson>('accounts', 'update', id, '--no-addon', '--enable', '--host', '', '--country', '', '--tax-rate', '');
      expect(a).to.include({ addon: false, enabled: true, host: null, country: null, tax_rate: null, tier: 'CUSTOM' });
    });

    it("unbinds the customer with --customer '' and with --no-customer", async () => {
      expect((await cli.json<AccountJson>('accounts', 'update', id, '--customer', '')).customer).to.equal(null);
      expect((await cli.json<AccountJson>('accounts', 'update', id, '--customer', 'other')).customer).to.equal('other');
      expect((await cli.json<AccountJson>('accounts', 'update', id, '--no-customer')).customer).to.equal(null);
    });

    it('--approve-event (repeatable) adds names to approved_events once, after the nine spec names', async () => {
      const a = await cli.json<AccountJson>('accounts', 'update', id,
        '--approve-event', 'refund_issued', '--approve-event', 'cart_viewed', '--approve-event', 'subscription_started');
      expect(a.approved_events).to.deep.equal([...SPEC_EVENT_NAMES, 'refund_issued', 'subscription_started']);
      const again = await cli.json<AccountJson>('accounts', 'update', id, '--approve-event', 'refund_issued');
      expect(again.approved_events).to.deep.equal(a.approved_events);
    });

    it('--consent-default granted|denied is stored and shown (granted until changed); another value is a usage error', async () => {
      const fresh = (await cli.json<AccountJson>('accounts', 'create', '--name', 'Consent')).script_id;
      expect((await cli.json<AccountJson>('accounts', 'show', fresh)).consent_default).to.equal('granted');
      expect((await cli.json<AccountJson>('accounts', 'update', fresh, '--consent-default', 'denied')).consent_default).to.equal('denied');
      expect((await cli.json<AccountJson>('accounts', 'show', fresh)).consent_default).to.equal('denied');
      expect((await cli.run('accounts', 'show', fresh)).stdout).to.match(/consent_default\s+denied/);
      expect((await cli.json<AccountJson>('accounts', 'update', fresh, '--consent-default', 'granted')).consent_default).to.equal('granted');
      const bad = await cli.run('accounts', 'update', fresh, '--consent-default', 'maybe');
      expect(bad.code).to.equal(2);
      expect(bad.stderr).to.match(/^tracklane: --consent-default must be granted or denied, got "maybe"/);
    });

    it('refuses bad values with one line on stderr and exit 1', async () => {
      // Bad tier, country and number syntax are covered on create; the same service checks both.
      const [host, taxRange, event, slug] = await Promise.all([
        cli.run('accounts', 'update', id, '--host', 'ftp://x.example', '--json'),
        cli.run('accounts', 'update', id, '--tax-rate', '101', '--json'),
        cli.run('accounts', 'update', id, '--approve-event', 'Bad-Name', '--json'),
        cli.run('accounts', 'update', id, '--customer', '../etc', '--json'),
      ]);
      expectFailure(host, 1, /^tracklane: host must use http or https/);
      expectFailure(taxRange, 1, /^tracklane: tax rate must be a number from 0 to 100/);
      expectFailure(event, 1, /^tracklane: event name must be snake_case/);
      expectFailure(slug, 1, /^tracklane: customer must be a folder slug/);
    });

    it('treats contradictory or missing options as usage errors (exit 2)', async () => {
      const [both, none] = await Promise.all([
        cli.run('accounts', 'update', id, '--enable', '--disable'),
        cli.run('accounts', 'update', id),
      ]);
      expect(both.code).to.equal(2);
      expect(both.stderr).to.match(/^tracklane: --enable and --disable cannot be used together\n/);
      expect(none.code).to.equal(2);
      expect(none.stderr).to.match(/^tracklane: nothing to change/);
    });
  });

  describe('rotate-token', () => {
    it('issues a different token; older ones expire after the grace period', async () => {
      const a = await cli.json<AccountJson>('accounts', 'create', '--name', 'Rotating');
      const before = Date.now();
      const r = await cli.json<Rotated>('accounts', 'rotate-token', a.script_id, '--grace-hours', '2');
      expect(r.script_id).to.equal(a.script_id);
      expect(r.access_token).to.match(/^tlk_[A-Za-z0-9_-]{32,}$/);
      expect(r.access_token).to.not.equal(a.access_token);
      expect(Date.parse(r.previous_token_expires_at)).to.be.within(before + 2 * HOUR - 1000, Date.now() + 2 * HOUR + 1000);
      expect(r.previous_token_expires_at).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

      const rows = tokenRows(cli.dataDir, a.script_id);
      expect(rows).to.have.length(2);
      const byHash = new Map(rows.map((t) => [t.hash, t]));
      expect(byHash.get(sha256(a.access_token!))?.expires_at).to.equal(Date.parse(r.previous_token_expires_at));
      expect(byHash.get(sha256(r.access_token))?.expires_at).to.equal(null);
    });

    it('defaults to 24 hours of grace', async () => {
      const before = Date.now();
      const r = await cli.json<Rotated>('accounts', 'rotate-token', created.script_id);
      expect(Date.parse(r.previous_token_expires_at)).to.be.within(before + 24 * HOUR - 1000, Date.now() + 24 * HOUR + 1000);
    });

    it('refuses a bad grace period and an unknown account', async () => {
      const [bad, negative, unknown] = await Promise.all([
        cli.run('accounts', 'rotate-token', created.script_id, '--grace-hours', 'soon', '--json'),
        cli.run('accounts', 'rotate-token', created.script_id, '--grace-hours', '1000', '--json'),
        cli.run('accounts', 'rotate-token', 'ZZZZ9999', '--json'),
      ]);
      expectFailure(bad, 1, '--grace-hours must be a number, got "soon"');
      expectFailure(negative, 1, /^tracklane: grace hours must be between 0 and 720/);
      expectFailure(unknown, 1, 'no account with script id "ZZZZ9999"');
    });
  });

  describe('token storage', () => {
    it('keeps only hashes: no token text in access_tokens or anywhere in the database files', async () => {
      const tokens = [created.access_token!];
      const rows = tokenRows(cli.dataDir);
      expect(rows.length).to.be.greaterThan(0);
      const dump = JSON.stringify(rows);
      for (const t of tokens) {
        expect(dump).to.not.include(t);
        expect(dump).to.not.include(t.slice(8)); // the random part beyond the display prefix
        expect(rows.map((r) => r.hash)).to.include(sha256(t));
      }
      for (const f of readdirSync(cli.dataDir)) {
        const bytes = readFileSync(join(cli.dataDir, f)).toString('latin1');
        for (const t of tokens) expect(bytes, f).to.not.include(t.slice(8));
      }
    });
  });

  describe('errors', () => {
    it('an unknown id exits 1 with one line on stderr and nothing on stdout', async () => {
      const [show, update] = await Promise.all([
        cli.run('accounts', 'show', 'ABCD1234', '--json'),
        cli.run('accounts', 'update', 'ABCD1234', '--tier', 'PRO'),
      ]);
      expectFailure(show, 1, 'no account with script id "ABCD1234"');
      expectFailure(update, 1, 'no account with script id "ABCD1234"');
    });

    it('refuses a bad tier or country on create, creating nothing', async () => {
      const before = (await cli.json<AccountJson[]>('accounts', 'list')).length;
      const [tier, country, tax, noName] = await Promise.all([
        cli.run('accounts', 'create', '--name', 'X', '--tier', 'GOLD', '--json'),
        cli.run('accounts', 'create', '--name', 'X', '--country', 'Romania', '--json'),
        cli.run('accounts', 'create', '--name', 'X', '--tax-rate', '19%', '--json'),
        cli.run('accounts', 'create', '--name', ' ', '--json'),
      ]);
      expectFailure(tier, 1, 'tier must be one of BASIC, FLEX, PRO, CUSTOM, got "GOLD"');
      expectFailure(country, 1, /^tracklane: country must be an ISO 3166-1 alpha-2 code/);
      expectFailure(tax, 1, '--tax-rate must be a number, got "19%"');
      expectFailure(noName, 1, 'name is required');
      expect(await cli.json<AccountJson[]>('accounts', 'list')).to.have.length(before);
    });

    it('unknown flags, unknown commands and missing arguments exit 2 with usage on stderr', async () => {
      const runs = await Promise.all([
        cli.run('accounts', 'create', '--name', 'X', '--colour', 'red', '--json'),
        cli.run('accounts', 'frobnicate', '--json'),
        cli.run('accounts', 'show', '--json'),
        cli.run('accounts', 'create', '--json'),
      ]);
      for (const r of runs) {
        expect(r.code, r.stderr).to.equal(2);
        expect(r.stdout).to.equal('');
        expect(r.stderr).to.match(/^tracklane: .+\n\nUsage:\n {2}tracklane accounts /);
      }
      expect(runs[0].stderr).to.match(/^tracklane: Unknown option '--colour'/);
      expect(runs[1].stderr).to.match(/^tracklane: unknown command "accounts frobnicate"/);
      expect(runs[2].stderr).to.match(/^tracklane: missing ID/);
      expect(runs[3].stderr).to.match(/^tracklane: --name is required/);
    });
  });
});

function sha256(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

interface TokenRow { id: number; script_id: string; hash: string; prefix: string; created_at: number; expires_at: number | null }

function tokenRows(dataDir: string, scriptId?: string): TokenRow[] {
  const db = new Database(join(dataDir, 'tracklane.db'), { readonly: true });
  try {
    const rows = db.prepare('SELECT * FROM access_tokens').all() as TokenRow[];
    return scriptId ? rows.filter((r) => r.script_id === scriptId) : rows;
  } finally {
    db.close();
  }
}
