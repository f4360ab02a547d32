// The README's systemd install steps, pasted as written, in a scratch root: the block is taken
// from README.md ("Deploying") and run by bash as root, with what a test on a shared machine
// cannot do changed, each for a reason:
// - /opt/tracklane, /var/lib/tracklane, /etc/tracklane and /etc/systemd/system are folders
//   under a temp folder (the unit's copy is moved there too), and the user `tracklane` is a
//   throwaway one, removed after;
// - `git clone` is a copy of this checkout (node_modules linked, so `npm ci` is left out),
//   `apt-get` is left out, and so is `systemctl`: the server is started as the unit starts
//   it (its user, folder, Environment= and ExecStart=, on a free port; PrivateTmp as a
//   folder of the service user's).
// Then: the service user runs the server with its settings (the admin token from
// /etc/tracklane/env opens the admin API, the store is in /var/lib/tracklane), the operator
// command runs as documented against the same store, and the service user can write neither
// the code nor /etc/tracklane. Needs root (useradd, runuser, setpriv): skipped otherwise, saying so.
import { expect } from 'chai';
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { copyProject } from '../helpers/project-copy.ts';
import { freePort } from '../helpers/free-port.ts';
import { ROOT } from '../helpers/spawn-server.ts';
import { tempDir, waitFor } from '../helpers/test-server.ts';
import { deployBlock, unitSettings } from './deploy-text.ts';

const has = (command: string): boolean => {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

function run(file: string, args: string[], opts: { cwd?: string; env: Record<string, string> }): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => execFile(file, args, { ...opts, encoding: 'utf8', maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
    resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr })));
}

describe('process: the README systemd install steps, pasted in a scratch root', function () {
  this.timeout(300_000);
  const user = `tl-deploy-${process.pid}`;
  let root: string;
  let server: ChildProcess | undefined;
  let userAdded = false;
  /** Folders given search permission for the service user, with their modes before. */
  const opened: { dir: string; mode: number }[] = [];

  before(function () {
    const missing = ['runuser', 'setpriv', 'useradd', 'userdel', 'bash'].filter((c) => !has(c));
    if (process.getuid?.() !== 0 || missing.length > 0) {
      console.log(`      (skipped: needs root and ${missing.join(', ') || 'runuser, useradd'} to add a throwaway service user; running as uid ${process.getuid?.()})`);
      this.skip();
    }
    root = tempDir('tl-deploy-root-');
    // The service user must reach its folders under the run's temp folder (0700, root's), and
    // through every folder above it: a system temp folder may be 0700 too. Search (x) only,
    // given back in after().
    for (let dir = tmpdir(); ; dir = dirname(dir)) {
      const mode = statSync(dir).mode & 0o7777;
      if ((mode & 0o001) === 0) {
        chmodSync(dir, mode | 0o011);
        opened.push({ dir, mode });
      }
      if (dirname(dir) === dir) break;
    }
    chmodSync(root, 0o755);
  });
  after(async () => {
    if (server && server.exitCode === null && server.signalCode === null) {
      process.kill(-server.pid!, 'SIGKILL');
      await once(server, 'exit');
    }
    if (userAdded) execFileSync('userdel', [user], { stdio: 'ignore' });
    if (root) rmSync(root, { recursive: true, force: true });
    for (const { dir, mode } of opened.reverse()) chmodSync(dir, mode);
  });

  it('install as root; the service user starts the server with its settings and writes only its data', async () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const install = deployBlock(readme, '# install tracklane');
    const operator = deployBlock(readme, '# operator commands');
    const R = root;
    // The system's paths under the scratch root, the service user a throwaway one.
    const scratch = (text: string) => text
      .replace(/(?<![\w/.-])tracklane(?![\w/.-])/g, user)
      .replace(/(^|[\s='"])\/(opt|var\/lib|etc)\/(tracklane|systemd\/system)\b/gm, `$1${R}/$2/$3`);
    for (const dir of ['opt', 'var/lib', 'etc/systemd/system', 'root', 'tmp']) mkdirSync(join(R, dir), { recursive: true, mode: 0o755 });
    chmodSync(join(R, 'tmp'), 0o1777);

    const code = copyProject('tl-deploy-code-');
    chmodSync(code, 0o755); // as git clone makes it (a temp folder is 0700)
    writeFileSync(join(code, 'deploy/tracklane.service'), scratch(readFileSync(join(code, 'deploy/tracklane.service'), 'utf8')));
    const leftOut: string[] = [];
    const lines = install.split('\n').filter((l) => l.trim() !== '').map((line) => {
      if (/^(apt-get|systemctl|npm ci)\b/.test(line) || (/^systemd-analyze\b/.test(line) && !has('systemd-analyze'))) {
        leftOut.push(line);
        return `: left out: ${JSON.stringify(line)}`;
      }
      if (line.startsWith('git clone ')) return `mv ${JSON.stringify(code)} ${JSON.stringify(`${R}/opt/tracklane`)}`;
      return scratch(line);
    });
    expect(leftOut.map((l) => l.split(' ')[0]), 'only what a scratch root cannot run is left out').to.have.members(
      ['apt-get', 'npm', 'systemctl', 'systemctl', ...(has('systemd-analyze') ? [] : ['systemd-analyze'])]);
    expect(lines.some((l) => l.startsWith('useradd '))).to.equal(true);
    // useradd runs inside the script: from here on the user exists until after().
    userAdded = true;
    const env = { PATH: process.env.PATH!, LANG: 'C.UTF-8', HOME: join(R, 'root') };
    const installed = await run('bash', ['-e', '-x', '-c', lines.join('\n')], { cwd: R, env });
    expect(installed.code, `the install steps failed:\n${installed.stdout}\n${installed.stderr}`).to.equal(0);

    // The layout: code and settings root's, settings readable by the service's group only.
    const gid = Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
    const etc = statSync(join(R, 'etc/tracklane'));
    const envFile = statSync(join(R, 'etc/tracklane/env'));
    expect([etc.uid, etc.gid, etc.mode & 0o777]).to.deep.equal([0, gid, 0o750]);
    expect([envFile.uid, envFile.gid, envFile.mode & 0o777]).to.deep.equal([0, gid, 0o640]);
    expect(statSync(join(R, 'opt/tracklane')).uid).to.equal(0);

    // Started as the unit starts it.
    const unit = unitSettings(readFileSync(join(R, 'etc/systemd/system/tracklane.service'), 'utf8'));
    expect(unit('User')).to.deep.equal([user]);
    const port = await freePort();
    const settings = unit('Environment').map((e) => (e.startsWith('PORT=') ? `PORT=${port}` : e));
    const home = join(R, 'var/lib/tracklane');
    // setpriv, as systemd's User=/Group=: the user's ids, then exec, so the server is this
    // process and SIGTERM reaches it (runuser would stay between, and SIGKILL it after 2 s).
    server = spawn('setpriv', [`--reuid=${unit('User')[0]}`, `--regid=${unit('Group')[0]}`, '--init-groups', '--', 'env', '-i', `PATH=${process.env.PATH}`, `HOME=${home}`, `TMPDIR=${join(R, 'tmp')}`, ...settings, ...unit('ExecStart')[0].split(' ')], {
      cwd: unit('WorkingDirectory')[0], detached: true, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    server.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    server.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const listening = await waitFor(() => {
      if (server!.exitCode !== null) throw new Error(`the server exited:\n${output}`);
      return output.includes('"msg":"tracklane listening"');
    }, 60_000);
    expect(listening, output).to.equal(true);
    expect(output, 'it runs the build root made').to.contain('"code":"dist"');
    expect(output, 'the steps give the data folder the modes the store wants').to.not.contain('tightened');
    expect(output).to.contain(`"database":"${join(home, 'tracklane.db')}"`);
    expect(statSync(join(home, 'tracklane.db')).uid, 'the store is the service user\'s').to.equal(statSync(home).uid);

    // It read its settings: the token the steps wrote opens the admin API.
    const token = /^ADMIN_TOKEN=(\S+)$/m.exec(readFileSync(join(R, 'etc/tracklane/env'), 'utf8'))![1];
    const accounts = await fetch(`http://127.0.0.1:${port}/admin/accounts`, { headers: { authorization: `Bearer ${token}` } });
    expect(accounts.status).to.equal(200);

    // The operator command, as documented: the same store, through the /opt/tracklane/.env link.
    const command = operator.split('\n').find((l) => l.startsWith('runuser '));
    expect(command, 'the operator block runs the CLI as the service user').to.be.a('string');
    const listed = await run('bash', ['-e', '-c', scratch(command!)], { cwd: R, env });
    expect(listed.code, listed.stderr).to.equal(0);
    expect(listed.stderr).to.contain(join(home, 'tracklane.db'));

    // What the service user cannot write: its code, its settings.
    const asUser = (script: string) => run('runuser', ['-u', user, '--', 'sh', '-c', script], { cwd: R, env });
    for (const script of [
      `touch ${R}/opt/tracklane/new-file`,
      `echo '// changed' >> ${R}/opt/tracklane/src/index.cjs`,
      `rm -f ${R}/opt/tracklane/.env`,
      `echo ADMIN_TOKEN=mine >> ${R}/etc/tracklane/env`,
      `touch ${R}/etc/tracklane/other`,
    ]) expect((await asUser(script)).code, `the service user can: ${script}`).to.not.equal(0);
    expect((await asUser(`touch ${home}/written-by-the-service`)).code, 'it writes its data folder').to.equal(0);
    expect(existsSync(join(R, 'opt/tracklane/new-file'))).to.equal(false);

    // systemctl stop: SIGTERM, and it drains and exits 0.
    const exited = once(server, 'exit');
    process.kill(server.pid!, 'SIGTERM');
    const [exitCode] = await exited;
    expect(exitCode, output).to.equal(0);
  });
});

