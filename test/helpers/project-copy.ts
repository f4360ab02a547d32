// A copy of this checkout as a clone of it has it, in a temp folder: for tests that need the
// project's own folder (its .env, relative paths from it) without touching the real one.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tempDir } from './test-server.ts';
import { ROOT } from './spawn-server.ts';

/**
 * Tracked files and new sources under src/, as they are now, with node_modules linked.
 * `only`: just the files under these paths (e.g. ['package.json', 'src']).
 */
export function copyProject(prefix = 'tl-project-', only?: readonly string[]): string {
  const dir = tempDir(prefix);
  const list = (args: string[]) => execFileSync('git', ['ls-files', '-z', ...args], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  const wanted = (file: string) => only === undefined || only.some((p) => file === p || file.startsWith(`${p}/`));
  for (const file of [...list([]), ...list(['--others', '--exclude-standard', '--', 'src'])].filter(wanted)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    try {
      cpSync(join(ROOT, file), join(dir, file));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err; // deleted in the working tree
    }
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}
