// npm start runs the build: in a copy of the project built with `npm run build`, the server
// runs dist/ with no loader process beside it, a custom endpoint folder scaffolded while it
// runs and a plugin folder added after the build load from TypeScript, the compiled plugins
// import the SDK by name and get the build's own, and once src/ changes after the build it
// runs the sources again, saying so.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, spawnServer, type SpawnedServer } from '../helpers/spawn-server.ts';
import { tempDir, waitFor } from '../helpers/test-server.ts';
import { commandLine, descendants } from '../helpers/process-tree.ts';

const ADMIN_TOKEN = 'built-entry-admin-token-0123456789';
const FALLBACK = /^tracklane: src\/ has changed since dist\/ was built; running the TypeScript sources through tsx \(slower start\)\. Run `npm run build` to build it\.$/m;

function run(file: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd, env: { ...process.env, ...env }, encoding: 'utf8' }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }));
  });
}

/** The project as a fresh clone has it (operator folders aside), sharing this checkout's node_modules. */
function copyProject(): string {
  const dir = tempDir('tl-built-');
  for (const f of ['package.json', 'tsconfig.json', 'src', 'plugins']) cpSync(join(ROOT, f), join(dir, f), { recursive: true });
  mkdirSync(join(dir, 'customers'));
  cpSync(join(ROOT, 'customers/demo'), join(dir, 'customers/demo'), { recursive: true });
  mkdirSync(join(dir, 'rules'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return dir;
}

/** A destination plugin written after the build: the webhook under another name, using the SDK. */
const LATE_PLUGIN = `import webhook from '../webhook/index.ts';
import { isSuccessStatus, type DestinationPlugin } from 'tracklane/sdk';

const late: DestinationPlugin = { ...webhook, name: 'late-hook', description: \`added after the build (204 is a success: \${isSuccessStatus(204)})\` };
export default late;
`;

/** A destination plugin in a folder outside the project (PLUGINS_DIR), built on the SDK alone. */
const OUTSIDE_PLUGIN = `import { COMMON_SETTINGS_PROPERTIES, isSuccessStatus, type DestinationPlugin } from 'tracklane/sdk';

const plugin: DestinationPlugin = {
  name: 'outside-hook', version: '1.0.0', category: 'webhook', consent: null, description: 'a plugin kept outside the project',
  settingsSchema: { type: 'object', properties: { ...COMMON_SETTINGS_PROPERTIES, key: { type: 'string' } }, required: ['key'], additionalProperties: false },
  secretSettings: ['key'], identifiers: null, batch: { maxEvents: 1 },
  buildRequests: () => [], classifyResponse: (r) => (isSuccessStatus(r.status) ? { outcome: 'success' } : { outcome: 'permanent', message: 'no' }),
};
export default plugin;
`;

describe('process: npm start runs the build in dist/', function () {
  this.timeout(180_000);
  let project: string;
  let server: SpawnedServer | undefined;
  const start = (env: Record<string, string> = {}): Promise<SpawnedServer> =>
    // The copy's own folders: spawnServer's defaults are this checkout's shipped ones.
    spawnServer({
      DATA_DIR: join(project, 'data'), ADMIN_TOKEN,
      RULES_DIR: join(project, 'rules'), PLUGINS_DIR: join(project, 'plugins'), CUSTOMERS_DIR: join(project, 'customers'), ...env,
    }, 60_000, project, ['npm', 'start']).then((s) => (server = s));
  const stop = async () => {
    if (server === undefined) return;
    server.child.kill('SIGTERM');
    await server.exited;
    server = undefined;
  };
  const admin = (path: string) => fetch(`${server!.url}${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });

  before(async () => {
    project = copyProject();
    // A module of a shipped plugin handing on what it imports from the SDK, compiled with the rest.
    writeFileSync(join(project, 'plugins/webhook/sdk-probe.ts'), "export { isSuccessStatus } from 'tracklane/sdk';\n");
    const built = await run('npm', ['run', 'build'], project);
    expect(built.code, built.stdout + built.stderr).to.equal(0);
    // The schemas' validators generated at build time (src/build-validators.mjs), so the server compiles none at start.
    expect(built.stdout).to.match(/generated the validators of \d+ schemas/);
    expect(built.stderr).not.to.include('validators were not generated');
  });
  afterEach(stop);
  after(() => project && rmSync(project, { recursive: true, force: true }));

  it('runs dist/ without a loader process, and picks up an endpoint folder scaffolded while it runs', async () => {
    const s = await start();
    expect(s.output()).to.include('"code":"dist"');
    expect(s.output()).not.to.include('running the TypeScript sources');
    const plugins = (await (await admin('/admin/plugins')).json()) as { items: { name: string }[] };
    expect(plugins.items.map((p) => p.name)).to.include.members(['webhook', 'ga4', 'meta-capi']);
    expect((await fetch(`${s.url}/console`)).status, 'the console pages are read from src/').to.equal(200);
    // npm's one child is the server (exec); nothing runs beside it (tsx's esbuild service was one).
    const [serverPid, ...more] = descendants(s.child.pid!);
    expect(more.map(commandLine), 'processes beside the server').to.deep.equal([]);
    expect(descendants(serverPid)).to.deep.equal([]);

    const made = await run(process.execPath, [join(project, 'src/cli/bin.mjs'), 'customers', 'new', 'acme', 'lead-sync'], project, { DATA_DIR: join(project, 'data') });
    expect(made.code, made.stderr).to.equal(0);
    expect(made.stderr, 'the CLI runs dist/ quietly').to.equal('');
    expect(await waitFor(() => /"customer":"acme","endpoint":"lead-sync".*"msg":"custom endpoint loaded without a restart"/.test(s.output()), 15_000), s.output()).to.equal(true);

    const plugin = await run(process.execPath, [join(project, 'src/cli/bin.mjs'), 'plugins', 'new', 'acme-ads'], project, { DATA_DIR: join(project, 'data') });
    expect(plugin.code, plugin.stderr).to.equal(0);
    expect(plugin.stderr, 'the CLI runs dist/ quietly').to.equal('');
  });

  it("compiled plugins import tracklane/sdk as written, and run on the build's own SDK modules", async () => {
    expect(readFileSync(join(project, 'dist/plugins/webhook/sdk-probe.js'), 'utf8')).to.include("from 'tracklane/sdk'");
    const url = (rel: string) => JSON.stringify(pathToFileURL(join(project, rel)).href);
    const r = await run(process.execPath, ['--input-type=module', '-e', `
      const { loadModule } = await import(${url('dist/src/load-module.js')});
      const sdk = await import(${url('dist/src/sdk/index.js')});
      const probe = await loadModule(${JSON.stringify(join(project, 'plugins/webhook/sdk-probe.ts'))});
      process.stdout.write(JSON.stringify({ same: probe.isSuccessStatus === sdk.isSuccessStatus }));
    `], project);
    expect(r.stdout, r.stderr).to.equal('{"same":true}');
  });

  it('loads a plugin folder added after the build, and one outside the project importing the SDK', async () => {
    mkdirSync(join(project, 'plugins/late-hook'));
    writeFileSync(join(project, 'plugins/late-hook/index.ts'), LATE_PLUGIN);
    const outside = tempDir('tl-built-outside-');
    mkdirSync(join(outside, 'outside-hook'));
    writeFileSync(join(outside, 'outside-hook/index.ts'), OUTSIDE_PLUGIN);
    const s = await start({ PLUGINS_DIR: outside });
    expect(s.output()).to.include('"code":"dist"');
    const plugins = (await (await admin('/admin/plugins')).json()) as { items: { name: string }[] };
    expect(plugins.items.map((p) => p.name)).to.include.members(['late-hook', 'outside-hook', 'webhook']);
    const listed = await run(process.execPath, [join(project, 'src/cli/bin.mjs'), 'plugins', 'list'], project, { DATA_DIR: join(project, 'data') });
    expect(listed.stdout).to.match(/^late-hook\s+1\.\d+\.\d+\s+/m);
  });

  it('runs the sources, with one line naming npm run build, once a file under src/ is newer than the build', async () => {
    const now = new Date();
    utimesSync(join(project, 'src/config.ts'), now, now); // changes its ctime too
    const s = await start();
    expect(s.output()).to.match(FALLBACK);
    expect(s.output().match(/npm run build/g)).to.have.length(1);
    expect(s.output()).to.include('"code":"src"');
  });
});
