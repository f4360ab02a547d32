// A test run is sealed off from the operator's machine and cleans up after itself: a mocha
// run started with an operator's settings in its environment and in ENV_FILE sees none of
// them, and a run whose test fails, or is interrupted, after making temp folders, a CLI store
// and a PostgreSQL database leaves none of them behind (the root hook, test/helpers/hermetic.ts).
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { ROOT } from '../helpers/spawn-server.ts';
import { tempDir } from '../helpers/test-server.ts';
import { databaseExists } from '../helpers/postgres.ts';
import { NO_SETTINGS_FILE, OPERATOR_SETTINGS, operatorEnvFile, SERVICE_VARIABLES, testProcessEnv } from '../helpers/service-variables.ts';

/** Every environment variable a file under src/ reads: `env.X`, `env['X']`, `str(env, 'X')`. */
function variablesReadBySource(): Set<string> {
  const found = new Set<string>();
  const patterns = [/\benv\??\.([A-Z][A-Z0-9_]+)/g, /\benv\[['"]([A-Z][A-Z0-9_]+)['"]\]/g, /\(env, '([A-Z][A-Z0-9_]+)'/g];
  for (const file of readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })) {
    if (!['.ts', '.mjs', '.cjs', '.js'].includes(extname(file))) continue;
    const text = readFileSync(join(ROOT, 'src', file), 'utf8');
    for (const re of patterns) for (const m of text.matchAll(re)) found.add(m[1]);
  }
  return found;
}

describe('process: a test run sees no operator setting and leaves nothing behind', function () {
  this.timeout(120_000);

  it('the root hook clears every variable the service reads', () => {
    // USER is the operating system's login (the CLI's default author of a rule version), not a setting.
    const missed = [...variablesReadBySource()].filter((name) => name !== 'USER' && !(SERVICE_VARIABLES as readonly string[]).includes(name));
    expect(missed, 'variables read under src/ that tests would inherit from the operator').to.deep.equal([]);
  });

  it('a process a test starts gets no service variable but those the test gives, even from a run without the root hook', () => {
    const saved = { ...process.env };
    try {
      Object.assign(process.env, OPERATOR_SETTINGS, { ENV_FILE: '/etc/tracklane/env', TZ: 'UTC' });
      const env = testProcessEnv({ DATA_DIR: '/tmp/a-test-store' });
      expect(SERVICE_VARIABLES.filter((name) => env[name] !== undefined)).to.deep.equal(['DATA_DIR', 'ENV_FILE']);
      expect(env).to.include({ DATA_DIR: '/tmp/a-test-store', ENV_FILE: NO_SETTINGS_FILE, TZ: 'UTC' });
    } finally {
      for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
      Object.assign(process.env, saved);
    }
  });

  it('a run started with every setting in its environment and ENV_FILE sees none, and a failing test leaves no temp folder or database', async () => {
    const run = await runFixture();
    expect(run.out, run.out).to.match(/1 passing/).and.match(/1 failing/).and.contain('deliberate failure');
    expect(run.code, run.out).to.equal(1);
    await expectNothingLeft(run);
  });

  it('a run interrupted as Ctrl-C does (SIGINT to its process group) leaves no temp folder or database', async () => {
    const run = await runFixture({ TL_FIXTURE_INTERRUPT: '1' }, (child) => process.kill(-child.pid!, 'SIGINT'));
    expect(run.out, 'interrupted while waiting').to.contain('fixture: waiting').and.not.contain('deliberate failure');
    await expectNothingLeft(run);
  });
});

interface FixtureRun {
  /** Exit code, or the signal that ended the run. */
  code: number | string;
  out: string;
  /** The run's temp folder. */
  scratch: string;
}

/**
 * Runs hermetic-run.fixture.ts in a mocha of its own, in a process group of its own, with the
 * operator's settings in its environment and in ENV_FILE and a temp folder of its own.
 * `whenWaiting` is called once the fixture says it waits to be interrupted.
 */
async function runFixture(env: Record<string, string> = {}, whenWaiting?: (child: ChildProcess) => void): Promise<FixtureRun> {
  const scratch = tempDir('tl-hermetic-tmp-');
  const settings = join(tempDir('tl-hermetic-env-'), 'operator.env');
  writeFileSync(settings, operatorEnvFile());
  const child = spawn(process.execPath, [join(ROOT, 'node_modules/mocha/bin/mocha.js'), '--spec', 'test/helpers/hermetic-run.fixture.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...OPERATOR_SETTINGS, ENV_FILE: settings, TMPDIR: scratch, TMP: scratch, TEMP: scratch, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  const collect = (d: Buffer) => {
    const waiting = !out.includes('fixture: waiting');
    out += d.toString();
    if (waiting && out.includes('fixture: waiting')) whenWaiting?.(child);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const code = await new Promise<number | string>((resolve) => child.once('close', (c, signal) => resolve(c ?? signal ?? -1)));
  return { code, out, scratch };
}

async function expectNothingLeft(run: FixtureRun): Promise<void> {
  expect(run.out, 'the CLI made its store').to.match(/fixture: account [A-Z0-9]{8} in /);
  // tsx keeps its compile cache there on purpose (tsx-<uid>), for every later run.
  expect(readdirSync(run.scratch).filter((name) => !name.startsWith('tsx-')), 'left in the temp folder').to.deep.equal([]);
  const database = /fixture: database (tl_test_[0-9a-f]+)/.exec(run.out)?.[1];
  if (database !== undefined) expect(await databaseExists(database), `database ${database} left behind`).to.equal(false);
}
