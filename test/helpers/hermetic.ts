// Mocha's root hook (.mocharc.cjs `require`): the test run is sealed off from the operator's
// machine before any test file loads.
// - Settings: every variable the service reads is removed from this process's environment,
//   and ENV_FILE points at an empty settings file, so neither the operator's shell nor the
//   project's `.env` (DATABASE_URL, ALLOW_PRIVATE_DESTINATIONS, ADMIN_TOKEN, …) reaches a
//   test's store, server or CLI: the processes tests start inherit this environment. A test
//   that needs a setting passes it itself.
// - Scratch: the temp folder (TMPDIR) becomes one folder of this run, so every temp
//   directory a test or a process it starts makes lands inside it; that folder, and what
//   helpers registered with atRunEnd (PostgreSQL databases), is removed after the last test,
//   failed or not, or when the run is interrupted, and the folder again at exit. Run folders
//   of runs that were killed outright (their process is gone) are removed by the next run.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runEndCleanups } from './run-end.ts';
import { NO_SETTINGS_FILE, SERVICE_VARIABLES } from './service-variables.ts';

/** Run folders are named after the process that owns them, so a later run can tell a dead one. */
const RUN_FOLDER_PREFIX = 'tl-run-';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // someone else's live process
  }
}

/** Removes the run folders in `dir` whose process has ended (a run that was killed). */
function removeDeadRunFolders(dir: string): void {
  for (const name of readdirSync(dir)) {
    const m = new RegExp(`^${RUN_FOLDER_PREFIX}(\\d+)-`).exec(name);
    if (m && Number(m[1]) !== process.pid && !alive(Number(m[1]))) rmSync(join(dir, name), { recursive: true, force: true });
  }
}

for (const name of SERVICE_VARIABLES) delete process.env[name];
process.env.ENV_FILE = NO_SETTINGS_FILE;

const systemTemp = tmpdir();
removeDeadRunFolders(systemTemp);
const runFolder = mkdtempSync(join(systemTemp, `${RUN_FOLDER_PREFIX}${process.pid}-`));
// os.tmpdir() reads these on every call (TMPDIR on POSIX, TEMP/TMP on Windows), here and in
// every process a test starts.
for (const name of ['TMPDIR', 'TMP', 'TEMP']) process.env[name] = runFolder;

const removeRunFolder = () => rmSync(runFolder, { recursive: true, force: true, maxRetries: 3 });
process.once('exit', removeRunFolder);
// Interrupted (Ctrl-C, a CI timeout): clean up as after the last test, for a few seconds at
// most, then end by the signal that came. Signals arriving meanwhile are absorbed: Ctrl-C
// reaches this process twice (from the terminal and forwarded by mocha's launcher, with a
// SIGTERM), and the default action of the second would end it before the cleanup.
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
let interrupted = false;
function onSignal(signal: NodeJS.Signals): void {
  if (interrupted) return;
  interrupted = true;
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    try {
      removeRunFolder();
    } finally {
      for (const s of SIGNALS) process.off(s, onSignal);
      process.kill(process.pid, signal);
    }
  };
  setTimeout(end, 3_000).unref();
  void runEndCleanups().catch(() => undefined).finally(end);
}
for (const signal of SIGNALS) process.on(signal, onSignal);

export const mochaHooks = {
  async afterAll(): Promise<void> {
    try {
      await runEndCleanups();
    } finally {
      removeRunFolder();
    }
  },
};
