// The SQLite store holds webhook signing secrets, GA4 API secrets and events' identifiers
// in clear, so its folder is the service user's alone (0700) and its files 0600 (the
// database; SQLite gives the -wal and -shm files the database file's mode), whatever the
// process umask: modes are set explicitly on creation, not left to the umask (which a
// worker thread cannot even change). What an older version, a restore with `cp` or an
// operator's umask left readable by others is tightened on open and reported, so the
// caller can say so once.
import { chmodSync, closeSync, fchmodSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** A mode this module tightened (or failed to: `error`), as octal strings. */
export interface ModeChange {
  path: string;
  from: string;
  to: string;
  error?: string;
}

const octal = (mode: number): string => `0${(mode & 0o777).toString(8).padStart(3, '0')}`;

/**
 * Removes the bits `allowed` does not have (group and others); never adds any. A folder or
 * file the process cannot chmod (another user's) is reported with `error`, not thrown: the
 * store stays usable and the operator is told.
 */
function tighten(path: string, allowed: number, changes: ModeChange[]): void {
  let mode: number;
  try {
    mode = statSync(path).mode & 0o777;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  if ((mode & ~allowed) === 0) return;
  const to = mode & allowed;
  try {
    chmodSync(path, to);
    changes.push({ path, from: octal(mode), to: octal(to) });
  } catch (err) {
    changes.push({ path, from: octal(mode), to: octal(to), error: (err as NodeJS.ErrnoException).code ?? String(err) });
  }
}

/**
 * Creates `file` empty with mode 0600 unless it exists (SQLite then opens it as it is and
 * keeps its mode). Returns whether it created it.
 */
export function createPrivateFile(file: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'wx', PRIVATE_FILE_MODE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    fchmodSync(fd, PRIVATE_FILE_MODE); // the umask may have taken bits the owner needs
  } finally {
    closeSync(fd);
  }
  return true;
}

/**
 * Makes the store at `file` private before SQLite opens it: its folder created 0700 (or
 * tightened), the database created 0600 (or tightened), and an existing -wal and -shm
 * tightened. Returns what was tightened; empty when all was private already.
 */
export function makeStorePrivate(file: string): ModeChange[] {
  const changes: ModeChange[] = [];
  const dir = dirname(file);
  if (mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE }) !== undefined) chmodSync(dir, PRIVATE_DIR_MODE);
  else tighten(dir, PRIVATE_DIR_MODE, changes);
  if (!createPrivateFile(file)) tighten(file, PRIVATE_FILE_MODE, changes);
  for (const side of [`${file}-wal`, `${file}-shm`]) tighten(side, PRIVATE_FILE_MODE, changes);
  return changes;
}

/** One line for an operator about `changes` (non-empty). */
export function describeModeChanges(changes: readonly ModeChange[]): string {
  const done = changes.filter((c) => !c.error);
  const failed = changes.filter((c) => c.error);
  const list = (cs: ModeChange[]) => cs.map((c) => `${c.path} ${c.from} -> ${c.to}${c.error ? ` (${c.error})` : ''}`).join(', ');
  const parts: string[] = [];
  if (done.length > 0) parts.push(`the store was readable by other users; tightened ${list(done)}`);
  if (failed.length > 0) parts.push(`the store is readable by other users and could not be tightened: ${list(failed)}; fix the owner or mode by hand`);
  return parts.join('; ');
}
