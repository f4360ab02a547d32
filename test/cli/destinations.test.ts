// `destinations add|list|update|remove`, `plugins list` and `rules preview`, through the real CLI.
import { expect } from 'chai';
import { writeFileSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { tempCli, expectFailure, type TempCli } from './run-cli.ts';
import { PLUGINS_DIR, shippedPluginNames, shippedPlugins } from '../helpers/shipped-plugins.ts';

const META = { pixel_id: '123456', access_token: 'meta-secret-token' };

describe('cli: destinations', () => {
  let cli: TempCli;
  let id: string;
  before(async () => {
    cli = tempCli();
    id = (await cli.json<{ script_id: string }>('accounts', 'create', '--name', 'Dest shop', '--addon', '--country', 'RO')).script_id;
  });
  after(() => cli.remove());

  it('adds a destination, printing {id, type, name, enabled} with secrets masked', async () => {
    const d = await cli.json<any>('destinations', 'add', id, '--type', 'meta-capi', '--config', JSON.stringify(META), '--name', 'Meta main');
    expect(d.id).to.match(/^dst_[0-9a-f]{16}$/);
    expect(d).to.include({ type: 'meta-capi', name: 'Meta main', enabled: true });
    expect(d.config).to.deep.equal({ pixel_id: '123456', access_token: '****' });
    const list = await cli.json<any[]>('destinations', 'list', id);
    expect(list.map((x) => x.id)).to.deep.equal([d.id]);
    expect(JSON.stringify(list)).to.not.include('meta-secret-token');
    const human = await cli.run('destinations', 'list', id);
    expect(human.stdout).to.not.include('meta-secret-token');
  });

  it('update --config merges: the secret beside a changed key is kept, null removes a key, --replace-config replaces', async () => {
    const d = await cli.json<any>('destinations', 'add', id, '--type', 'meta-capi', '--config', JSON.stringify({ ...META, test_event_code: 'TEST1' }));
    const human = await cli.run('destinations', 'update', id, d.id, '--config', JSON.stringify({ pixel_id: '999', test_event_code: null }));
    expect(human.code, human.stderr).to.equal(0);
    expect(human.stdout).to.contain('Config merged: set pixel_id; removed test_event_code; other keys kept.');
    const db = new Database(join(cli.dataDir, 'tracklane.db'), { readonly: true });
    const stored = () => JSON.parse((db.prepare('SELECT settings FROM destinations WHERE id = ?').get(d.id) as { settings: string }).settings);
    expect(stored()).to.deep.equal({ pixel_id: '999', access_token: 'meta-secret-token' });
    const replaced = await cli.run('destinations', 'update', id, d.id, '--replace-config', '--config', JSON.stringify({ pixel_id: '1', access_token: 'new-token' }));
    expect(replaced.stdout).to.contain('Config replaced.');
    expect(stored()).to.deep.equal({ pixel_id: '1', access_token: 'new-token' });
    const broken = await cli.run('destinations', 'update', id, d.id, '--config', JSON.stringify({ access_token: null }));
    expect(broken.code, 'removing a required key is refused by the plugin schema').to.equal(1);
    expect(stored().access_token).to.equal('new-token');
    db.close();
    await cli.json('destinations', 'remove', id, d.id);
  });

  it('reads --config @file, updates, disables and removes', async () => {
    const file = join(cli.dataDir, 'ga4.json');
    writeFileSync(file, JSON.stringify({ measurement_id: 'G-ABC123', api_secret: 'ga-secret' }));
    const d = await cli.json<any>('destinations', 'add', id, '--type', 'ga4', '--config', `@${file}`);
    const updated = await cli.json<any>('destinations', 'update', id, d.id, '--config', JSON.stringify({ measurement_id: 'G-XYZ789', api_secret: 'ga-secret-2' }), '--disable');
    expect(updated).to.include({ enabled: false });
    expect(updated.config).to.deep.equal({ measurement_id: 'G-XYZ789', api_secret: '****' });
    expect((await cli.json<any>('destinations', 'remove', id, d.id))).to.deep.equal({ id: d.id, removed: true, canceled_deliveries: 0 });
    expect((await cli.json<any[]>('destinations', 'list', id)).map((x) => x.type)).to.not.include('ga4');
  });

  it('OAuth configs: client_secret and refresh_token masked in add, list and stats; a half-given OAuth form refused; a reauthorize pause shown in list and stats', async function () {
    this.timeout(240_000); // eight CLI runs
    const oauth = { customer_id: '123-456-7890', developer_token: 'dev-secret', conversion_actions: { checkout_completed: '1' },
      client_id: '123.apps.googleusercontent.com', client_secret: 'GOCSPX-cli-secret', refresh_token: '1//0cli-refresh' };
    const added = await cli.run('destinations', 'add', id, '--type', 'google-ads', '--config', JSON.stringify(oauth));
    expect(added.code, added.stderr).to.equal(0);
    const d = await cli.json<any[]>('destinations', 'list', id).then((l) => l.find((x) => x.type === 'google-ads'));
    expect(d.config).to.include({ client_id: '123.apps.googleusercontent.com', client_secret: '****', refresh_token: '****', developer_token: '****' });
    expect(d).to.include({ paused: false, pause_reason: null });

    const db = new Database(join(cli.dataDir, 'tracklane.db'));
    db.prepare(`INSERT INTO destination_health (destination_id, last_failure_at, failing_since, paused_at, pause_reason, paused_destination_updated_at)
      VALUES (?, 1, 1, 2, 'reauthorize', 0)`).run(d.id);
    db.close();
    const paused = await cli.json<any[]>('destinations', 'list', id).then((l) => l.find((x) => x.id === d.id));
    expect(paused).to.include({ paused: true, pause_reason: 'reauthorize' });
    const human = await cli.run('destinations', 'list', id);
    expect(human.stdout).to.match(new RegExp(`${d.id} +google-ads +google-ads +PAUSED \\(reauthorize\\)`));
    const stats = await cli.run('stats', '--account', id);
    expect(stats.stdout).to.include('PAUSED (reauthorize)');
    const statsJson = await cli.json<any>('stats', '--account', id);
    expect(statsJson.destinations.find((x: any) => x.destination_id === d.id)).to.include({ paused: true, pause_reason: 'reauthorize' });
    for (const out of [added.stdout, added.stderr, human.stdout, stats.stdout, JSON.stringify(statsJson)]) {
      expect(out).to.not.include('GOCSPX-cli-secret').and.not.include('1//0cli-refresh');
    }

    const { refresh_token: _r, ...half } = oauth;
    expectFailure(await cli.run('destinations', 'add', id, '--type', 'google-ads', '--config', JSON.stringify(half)), 1,
      'invalid google-ads config: config: OAuth needs client_id, client_secret and refresh_token together (missing refresh_token)');
    const { client_id: _c, client_secret: _s, ...none } = half;
    expectFailure(await cli.run('destinations', 'add', id, '--type', 'google-ads', '--config', JSON.stringify(none)), 1,
      /config: give access_token, or client_id, client_secret and refresh_token/);
    await cli.json('destinations', 'remove', id, d.id);
  });

  it('refuses configs the plugin schema refuses, unknown types and unknown ids, with one line', async () => {
    const runs = await Promise.all([
      cli.run('destinations', 'add', id, '--type', 'meta-capi', '--config', '{"pixel_id":"1"}', '--json'),
      cli.run('destinations', 'add', id, '--type', 'nope', '--config', '{}', '--json'),
      cli.run('destinations', 'add', 'ZZZZZZZZ', '--type', 'ga4', '--config', '{}', '--json'),
      cli.run('destinations', 'add', id, '--type', 'ga4', '--config', 'not json', '--json'),
      cli.run('destinations', 'remove', id, 'dst_0000000000000000', '--json'),
    ]);
    expectFailure(runs[0], 1, /^tracklane: invalid meta-capi config: config: must have required property 'access_token'\n$/);
    expectFailure(runs[1], 1, `unknown destination type "nope" (plugins: ${shippedPluginNames().join(', ')})`);
    expectFailure(runs[2], 1, 'no account with script id "ZZZZZZZZ"');
    expectFailure(runs[3], 1, '--config must be a JSON object or @file holding one');
    expectFailure(runs[4], 1, `account ${id} has no destination "dst_0000000000000000"`);
  });

  it('stores secrets only in the database, never in other files', async () => {
    for (const f of readdirSync(cli.dataDir).filter((f) => !f.startsWith('tracklane.db') && f !== 'ga4.json')) {
      expect(readFileSync(join(cli.dataDir, f), 'utf8')).to.not.include('meta-secret-token');
    }
  });

  it('plugins list names every folder under plugins/, each as its definition describes itself', async () => {
    const list = await cli.json<any[]>('plugins', 'list');
    expect(list.map((p) => p.name)).to.deep.equal(shippedPluginNames());
    const expected = [...(await shippedPlugins()).values()].map(({ plugin }) => ({
      name: plugin.name, version: plugin.version, category: plugin.category, description: plugin.description,
      max_batch: plugin.batch.maxEvents, folder: join(PLUGINS_DIR, plugin.name),
    }));
    expect(list).to.deep.equal(expected);
  });

  it('rules preview prints what each destination would receive', async () => {
    const file = join(cli.dataDir, 'lead.json');
    writeFileSync(file, JSON.stringify({ event: { name: 'lead_created', id: 'L-9' }, context: { environment: 'prod', data_source: 'crm' }, user: { email: 'A@B.com' }, consent: { analytics: true, personalization: true, marketing: true } }));
    const r = await cli.json<any>('rules', 'preview', '--account', id, '--event', file);
    expect(r.errors).to.deep.equal([]);
    const meta = r.preview.find((p: any) => p.type === 'meta-capi');
    expect(meta.status).to.equal('would_send');
    expect(meta.requests[0].url).to.match(/access_token=\*\*\*\*$/);
    expect(meta.requests[0].body.data[0]).to.include({ event_name: 'Lead', event_id: 'L-9' });
    // sha256('a@b.com')
    expect(meta.requests[0].body.data[0].user_data.em).to.equal('fb98d44ad7501a959f3f4f4a3f004fe2d9e581ea6207e218c4b02c08a4d75adf');
    const bad = await cli.run('rules', 'preview', '--account', id, '--event', file.replace('lead', 'missing'), '--json');
    expectFailure(bad, 1, /^tracklane: cannot read a JSON event from .*\(one event payload as POSTed to \/webhooks\/service\/event\)/);
    const help = await cli.run('rules', 'preview', '--help');
    expect(help.stdout, 'the help says what FILE is, with an example').to.contain('FILE holds one event payload exactly as you would')
      .and.contain('{"event":{"name":"lead_created","id":"L-1"}');
    const missing = await cli.run('rules', 'preview', '--account', id);
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.contain('--event is required: a JSON file holding one event payload');
  });
});

describe('cli: destination URLs are checked for SSRF when saved', () => {
  let cli: TempCli;
  let id: string;
  before(async () => {
    cli = tempCli();
    id = (await cli.json<{ script_id: string }>('accounts', 'create', '--name', 'SSRF shop', '--addon')).script_id;
  });
  after(() => cli.remove());

  it('refuses loopback, private and metadata URLs for the webhook url and endpoint overrides', async () => {
    const secret = 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=';
    const runs = await Promise.all([
      cli.run('destinations', 'add', id, '--type', 'webhook', '--config', JSON.stringify({ url: 'http://127.0.0.1:9000/hook', secret }), '--json'),
      cli.run('destinations', 'add', id, '--type', 'webhook', '--config', JSON.stringify({ url: 'http://169.254.169.254/latest', secret }), '--json'),
      cli.run('destinations', 'add', id, '--type', 'ga4', '--config', JSON.stringify({ measurement_id: 'G-A1', api_secret: 's', endpoint: 'http://10.0.0.1' }), '--json'),
    ]);
    expectFailure(runs[0], 1, /^tracklane: config\.url: address 127\.0\.0\.1 is loopback; private, loopback and link-local addresses are refused unless ALLOW_PRIVATE_DESTINATIONS=1 \(set it in \.env so the CLI and the server both see it\)\n$/);
    expectFailure(runs[1], 1, /^tracklane: config\.url: /);
    expectFailure(runs[2], 1, /^tracklane: config\.endpoint: /);
    const ok = await cli.json<any>('destinations', 'add', id, '--type', 'webhook', '--config', JSON.stringify({ url: 'https://hooks.example.com/in', secret }));
    expect(ok.type).to.equal('webhook');
  });
});
