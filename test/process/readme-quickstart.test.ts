// The README's Quick start, pasted as written: its shell blocks are taken from README.md and
// run as a reader runs them, in a copy of the project (terminal 1's `npm start` in the
// background, terminal 2 as one shell session), and the answers the README shows are checked.
// What differs from a reader's run, and why: node_modules is linked, so `npm install` is
// skipped; `localhost:8080` and the receiver's 9999 become free ports (a shared machine).
import { expect } from 'chai';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { waitFor } from '../helpers/test-server.ts';
import { copyProject } from '../helpers/project-copy.ts';
import { freePort } from '../helpers/free-port.ts';
import { ROOT } from '../helpers/spawn-server.ts';
import { USAGE } from '../../src/cli/usage.ts';
import { cliTableCommands, quickStartSteps, usageCommands, type QuickStartStep } from './readme-text.ts';

/** A reader's environment: no tracklane settings inherited from whoever runs the tests. */
function readerEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of ['PATH', 'HOME', 'LANG', 'TMPDIR']) if (process.env[k] !== undefined) env[k] = process.env[k]!;
  return env;
}

/** Terminal 2: one shell session; each block runs in it (variables carry over) and stops it on a failing command. */
class Terminal {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  private exited = false;
  private count = 0;

  constructor(cwd: string, env: Record<string, string>) {
    this.child = spawn('bash', ['--noprofile', '--norc'], { cwd, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout!.on('data', (d: Buffer) => (this.stdout += d.toString()));
    this.child.stderr!.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.child.once('exit', () => (this.exited = true));
    this.child.stdin!.write('set -e\n');
  }

  /** Runs `script` as pasted (its stdin is not the session's); resolves with what it printed on stdout. */
  async run(script: string, file: string): Promise<string> {
    const n = ++this.count;
    const marker = `@@block-${n}-done`;
    const from = this.stdout.length;
    this.child.stdin!.write(`source ${JSON.stringify(file)} </dev/null; printf '\\n${marker}\\n'\n`);
    const done = await waitFor(() => {
      if (this.exited) throw new Error(`terminal 2 stopped at a failing command of:\n${script}\nstdout:\n${this.stdout.slice(from)}\nstderr:\n${this.stderr}`);
      return this.stdout.includes(marker, from);
    }, 30_000);
    if (!done) throw new Error(`terminal 2 still runs after 30 s:\n${script}\nstdout:\n${this.stdout.slice(from)}\nstderr:\n${this.stderr}`);
    return this.stdout.slice(from, this.stdout.indexOf(`\n${marker}`, from));
  }

  close(): void {
    if (!this.exited) process.kill(-this.child.pid!, 'SIGKILL');
  }
}

/** Terminal 1: a block's lines before `npm start` run to completion, then the service runs until Ctrl-C. */
interface Service {
  child: ChildProcess;
  output: string;
  exited: Promise<unknown>;
}

function startService(line: string, cwd: string, env: Record<string, string>): Promise<Service> {
  const child = spawn('bash', ['-c', line], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const service: Service = { child, output: '', exited: once(child, 'exit') };
  child.stdout!.on('data', (d: Buffer) => (service.output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (service.output += d.toString()));
  return waitFor(() => {
    if (child.exitCode !== null) throw new Error(`${line} exited before listening:\n${service.output}`);
    return service.output.includes('"msg":"tracklane listening"');
  }, 30_000).then((listening) => {
    if (!listening) throw new Error(`${line} did not say it listens in 30 s:\n${service.output}`);
    return service;
  });
}

/** Ctrl-C in terminal 1: SIGINT to its foreground process group. */
async function stopService(service: Service, signal: NodeJS.Signals = 'SIGINT'): Promise<void> {
  if (service.child.exitCode !== null || service.child.signalCode !== null) return;
  process.kill(-service.child.pid!, signal);
  await service.exited;
}

function runShell(script: string, cwd: string, env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => execFile('bash', ['-e', '-c', script], { cwd, env, encoding: 'utf8' }, (err, stdout, stderr) =>
    err ? reject(new Error(`terminal 1 failed: ${script}\n${stdout}${stderr}`)) : resolve(stdout)));
}

/** The text shown in backticks right after `lead` in the prose, as a pattern (`…` = anything). */
function shownAfter(prose: string, lead: string): RegExp {
  const text = new RegExp(`${lead}\\s+\`([^\`]+)\``).exec(prose.replace(/\s*\n\s*/g, ' '));
  if (!text) throw new Error(`the README no longer says "${lead} \`…\`"`);
  return new RegExp(text[1].split('…').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*'));
}

describe('process: the README quick start, pasted as written', function () {
  this.timeout(120_000);
  let dir: string;
  let terminal: Terminal | undefined;
  let service: Service | undefined;

  before(() => {
    dir = copyProject('tl-readme-');
  });
  after(async () => {
    terminal?.close();
    if (service) await stopService(service, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('every block works and gives what the README shows', async () => {
    const steps: QuickStartStep[] = quickStartSteps(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    const [port, receiverPort] = [await freePort(), await freePort()];
    const env = readerEnv();
    const local = (text: string) => text.replaceAll('localhost:8080', `localhost:${port}`).replaceAll('9999', String(receiverPort));
    terminal = new Terminal(dir, env);
    let lastOutput = '';
    let shellBlocks = 0;

    for (const step of steps) {
      for (const block of step.blocks) {
        if (block.lang === 'json') {
          // An answer the README shows is the answer the block before it printed.
          const shown = JSON.parse(block.text) as Record<string, unknown>;
          const got = JSON.parse(lastOutput) as Record<string, unknown>;
          expect(Object.keys(got), step.heading).to.include.members(Object.keys(shown));
          for (const k of ['emitter', 'detail', 'level', 'version', 'errors', 'warnings']) expect(got[k], `${step.heading}: ${k}`).to.deep.equal(shown[k]);
          continue;
        }
        if (block.lang !== 'sh') continue;
        shellBlocks++;
        expect(block.terminal, `${step.heading}: a shell block says which terminal it is for:\n${block.text}`).to.be.oneOf([1, 2]);
        if (block.terminal === 1) {
          const lines = block.text.split('\n').filter((l) => l.trim() !== '');
          const start = lines.pop()!.replace(/\s+#.*$/, '');
          expect(start, `${step.heading}: terminal 1 ends by starting the service`).to.match(/npm start$/);
          if (service) await stopService(service);
          const before = lines.map((l) => (l.trim() === 'npm install' ? 'true  # node_modules is linked' : local(l))).join('\n');
          const printed = before ? await runShell(before, dir, env) : '';
          if (/ADMIN_TOKEN/.test(block.text)) {
            // The token is shown before the service holds the terminal, and it is the one the service runs with.
            const token = /^ADMIN_TOKEN=([0-9a-f]{48})$/m.exec(printed)?.[1];
            expect(token, `${step.heading}: the admin token is printed before the service starts:\n${block.text}\n${printed}`).to.be.a('string');
            service = await startService(start, dir, { ...env, PORT: String(port) });
            const r = await fetch(`http://127.0.0.1:${port}/admin/accounts`, { headers: { authorization: `Bearer ${token}` } });
            expect(r.status, 'the printed token opens the admin API').to.equal(200);
            continue;
          }
          service = await startService(start, dir, { ...env, PORT: String(port) });
          continue;
        }
        expect(service, 'terminal 2 runs against a running service').to.not.equal(undefined);
        lastOutput = await terminal.run(block.text, writeBlock(dir, shellBlocks, local(block.text)));
        if (/webhooks\/service\/event\?/.test(block.text)) {
          // The production answer the step shows, then the receiver's line.
          const answer = /`(\{"emitter":"tracklane","detail":"Event received"[^`]*\})`/.exec(step.prose.replace(/\s*\n\s*/g, ' '))?.[1];
          expect(answer, `${step.heading} shows the intake's answer`).to.be.a('string');
          expect(lastOutput.trimEnd().endsWith(answer!), `${step.heading}: the intake answers as shown:\n${lastOutput}`).to.equal(true);
          const printed = shownAfter(step.prose, 'The receiver prints');
          const received = await waitFor(() => printed.test(terminal!.stdout), 20_000);
          expect(received, `the receiver prints ${printed}:\n${terminal.stdout}\n${service?.output}`).to.equal(true);
        }
        if (/events show L-1/.test(block.text)) {
          // What the step says step 5's destinations made of the lead: GA4 skips it, Meta's is sent.
          const row = (type: string) => lastOutput.split('\n').find((l) => new RegExp(`\\s${type}\\s`).test(l)) ?? '';
          expect(row('ga4'), `${step.heading}: GA4's delivery of L-1:\n${lastOutput}`).to.match(shownAfter(step.prose, "GA4's is"));
          expect(row('meta-capi'), `${step.heading}: Meta's delivery of L-1:\n${lastOutput}`).to.match(/\smeta-capi\s+(pending|failed)\s/);
        }
      }
    }
    expect(shellBlocks, 'the Quick start has shell blocks').to.be.greaterThan(3);
  });

  it('the CLI table names every command --help lists', () => {
    const table = cliTableCommands(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    const usage = usageCommands(USAGE);
    expect(usage.size).to.be.greaterThan(20);
    expect([...usage].filter((c) => !table.has(c)), 'missing from the README table').to.deep.equal([]);
  });
});

/** Writes a block to a file the session sources (so a command reading stdin cannot eat the next line). */
function writeBlock(dir: string, n: number, text: string): string {
  const file = join(dir, '.tmp', `quickstart-block-${n}.sh`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}
