// The systemd unit shipped in deploy/: systemd accepts it (`systemd-analyze verify`, where
// the machine has systemd), it starts node itself on npm start's entry with npm start's flags
// (no npm between systemd and the server), gives the drain room to finish, writes only the
// data folder the README's install steps set as DATA_DIR, and sets only variables the
// configuration reads (a misspelt one would be ignored without a word).
import { expect } from 'chai';
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../helpers/test-server.ts';
import { deployBlock, unitSettings } from './deploy-text.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const unit = readFileSync(`${ROOT}deploy/tracklane.service`, 'utf8');
const config = readFileSync(`${ROOT}src/config.ts`, 'utf8');
const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { scripts: Record<string, string> };
const install = deployBlock(readFileSync(`${ROOT}README.md`, 'utf8'), '# install tracklane');
const value = unitSettings(unit);

function which(command: string): string | null {
  try {
    return execFileSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

describe('deploy/tracklane.service', () => {
  it('systemd-analyze verify accepts it, as the install steps write it', async function () {
    const analyze = which('systemd-analyze');
    if (analyze === null) {
      console.log('      (skipped: systemd-analyze is not installed here; Debian package "systemd")');
      this.skip();
    }
    // The install steps put where `command -v node` finds Node in place of /usr/bin/node.
    expect(install, 'the steps write the node found into the unit').to.include('sed "s|/usr/bin/node|$(command -v node)|" deploy/tracklane.service > /etc/systemd/system/tracklane.service');
    const file = join(tempDir('tl-unit-'), 'tracklane.service');
    writeFileSync(file, unit.replaceAll('/usr/bin/node', process.execPath));
    const { code, output } = await new Promise<{ code: number; output: string }>((resolve) =>
      execFile(analyze!, ['verify', file], { encoding: 'utf8' }, (err, stdout, stderr) => resolve({ code: err ? 1 : 0, output: stdout + stderr })));
    expect(output.trim(), 'no warning either').to.equal('');
    expect(code).to.equal(0);
  });

  it('runs node on npm start\'s entry with its flags, and stops with SIGTERM leaving the 10 s drain room', () => {
    const start = /^exec node (.*) (src\/index\.cjs)$/.exec(pkg.scripts.start);
    expect(start, 'npm start execs node on src/index.cjs').to.not.equal(null);
    expect(value('ExecStart')).to.deep.equal([`/usr/bin/node ${start![1]} /opt/tracklane/${start![2]}`]);
    expect(value('WorkingDirectory')).to.deep.equal(['/opt/tracklane']);
    expect(value('KillSignal')).to.deep.equal(['SIGTERM']);
    expect(Number(value('TimeoutStopSec')[0])).to.be.greaterThan(10);
  });

  it('writes only the DATA_DIR its settings file sets, read-only everywhere else', () => {
    const envFile = value('Environment').find((e) => e.startsWith('ENV_FILE='))!.slice('ENV_FILE='.length);
    const dataDir = new RegExp(`^echo 'DATA_DIR=(\\S+)' >> ${envFile}$`, 'm').exec(install)?.[1];
    expect(dataDir, 'the install steps put DATA_DIR in the settings file').to.be.a('string');
    expect(value('StateDirectory').map((d) => `/var/lib/${d}`)).to.deep.equal([dataDir]);
    expect(value('ReadWritePaths').join(' ').split(/\s+/)).to.deep.equal([dataDir]);
    for (const [key, v] of [['ProtectSystem', 'strict'], ['NoNewPrivileges', 'yes'], ['PrivateTmp', 'yes'], ['ProtectHome', 'yes'], ['RestrictSUIDSGID', 'yes']]) {
      expect(value(key), key).to.deep.equal([v]);
    }
    expect(install, 'the CLI in the checkout reads the same file').to.match(new RegExp(`^ln -sfn ${envFile} /opt/tracklane/\\.env$`, 'm'));
  });

  it('sets only variables the configuration reads, DATA_DIR left to the settings file the CLI reads too', () => {
    const read = new Set([...config.matchAll(/(?:str|int)\(env, '([A-Z_]+)'/g)].map((m) => m[1]));
    const set = value('Environment').map((e) => e.slice(0, e.indexOf('=')));
    for (const name of set.filter((n) => n !== 'ENV_FILE')) expect(read.has(name), `${name} is read by src/config.ts`).to.equal(true);
    expect(set).to.not.include('DATA_DIR');
  });
});

