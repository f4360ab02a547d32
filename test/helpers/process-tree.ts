// Reads the process tree from /proc (Linux), so process tests can name every process a
// launcher started and check that none of them outlives it, orphans included.
import { readdirSync, readFileSync } from 'node:fs';

interface ProcStat {
  pid: number;
  ppid: number;
  state: string;
}

function readStat(pid: number): ProcStat | null {
  try {
    // The command name (field 2) is in parentheses and may hold spaces: split after its last ')'.
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, ppid] = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { pid, ppid: Number(ppid), state };
  } catch {
    return null;
  }
}

/** Every live descendant of `pid` (children, their children, …), at this moment. */
export function descendants(pid: number): number[] {
  const all = readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map((d) => readStat(Number(d))).filter((s): s is ProcStat => s !== null);
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const s of all) {
      if (s.ppid === parent && s.state !== 'Z') {
        found.push(s.pid);
        queue.push(s.pid);
      }
    }
  }
  return found;
}

/** Whether `pid` still runs: an exited process waiting to be reaped (a zombie) does not. */
export function isRunning(pid: number): boolean {
  const s = readStat(pid);
  return s !== null && s.state !== 'Z';
}

/** The command line of `pid`, arguments joined by spaces ('' once it is gone). */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}
