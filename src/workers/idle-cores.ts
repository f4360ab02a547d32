// How many of the machine's cores sat idle lately, from the kernel's per-CPU time counters
// (os.cpus()). The hashing pool asks before it takes a batch: a pool thread only saves time
// when a core is free to run it; on a machine whose cores are busy (the server's own HTTP and
// delivery threads, its database, its clients) posting a batch to another thread costs more
// CPU than hashing it where it is, and that CPU comes out of the same cores.
import { cpus } from 'node:os';

export interface CpuTimes {
  /** Idle time summed over every core, ms. */
  idle: number;
  /** All time summed over every core, ms. */
  total: number;
  cores: number;
}

export function machineCpuTimes(): CpuTimes {
  let idle = 0;
  let total = 0;
  const all = cpus();
  for (let i = 0; i < all.length; i++) {
    const t = all[i].times;
    idle += t.idle;
    total += t.user + t.nice + t.sys + t.idle + t.irq;
  }
  return { idle, total, cores: all.length };
}

/** Idle cores between two readings: the idle share of the elapsed time times the core count. */
export function idleCoresBetween(a: CpuTimes, b: CpuTimes): number {
  const total = b.total - a.total;
  if (total <= 0 || b.cores === 0) return 0;
  return ((b.idle - a.idle) / total) * b.cores;
}

/**
 * `() => boolean`: whether at least `minCores` cores were idle over the latest window. A new
 * reading is taken when the last one is older than `windowMs`, so a busy caller reads the
 * counters at most once a window and nothing runs in between (no timer). Until there are two
 * readings the answer is false.
 */
export function whenCoresIdle(minCores: number, opts: { windowMs?: number; now?: () => number; read?: () => CpuTimes } = {}): () => boolean {
  const windowMs = opts.windowMs ?? 1000;
  const now = opts.now ?? Date.now;
  const read = opts.read ?? machineCpuTimes;
  let last: { at: number; times: CpuTimes } | undefined;
  let answer = false;
  return () => {
    const t = now();
    if (last === undefined || t - last.at >= windowMs) {
      const times = read();
      if (last !== undefined) answer = idleCoresBetween(last.times, times) >= minCores;
      last = { at: t, times };
    }
    return answer;
  };
}
