// Spawns the real server (`node src/index.cjs`, npm start's entry) as its own process on a
// given data directory, and reports its URL once it logs that it listens.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { shippedFolderEnv } from './shipped-folders.ts';
import { testProcessEnv } from './service-variables.ts';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface SpawnedServer {
  child: ChildProcess;
  url: string;
  /** Everything the process wrote, stdout and stderr. */
  output(): string;
  /** Resolves with the exit code (or signal name) once the process ends. */
  exited: Promise<number | string>;
}

/**
 * RULES_DIR, CUSTOMERS_DIR and PLUGINS_DIR are the shipped folders (shipped-folders.ts) unless `env` names others;
 * no other setting but those in `env` (testProcessEnv).
 * `cwd`: run from another folder (its .env applies), with tsx and the entry found by path.
 * `command`: how to launch it (`['npm', 'start']`); by default npm start's entry, tsx's
 * require hook found from the entry's own folder whatever the cwd.
 */
export async function spawnServer(env: Record<string, string>, timeoutMs = 15_000, cwd = ROOT, command = [process.execPath, join(ROOT, 'src/index.cjs')]): Promise<SpawnedServer> {
  const [file, ...args] = command;
  const child = spawn(file, args, {
    cwd,
    env: testProcessEnv({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...shippedFolderEnv(), ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in ${timeoutMs} ms:\n${out}`)), timeoutMs);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = out.match(/"url":"(http:\/\/[^"]+)".*"msg":"tracklane listening"/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${out}`));
    });
  });
  return { child, url, output: () => out, exited };
}
