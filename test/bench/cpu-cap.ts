// CPU caps for bench processes through the cgroup cpu controller (v1 cpu.cfs_quota_us or
// v2 cpu.max, whichever this machine mounts), so `bench:scale` can give each instance a
// fixed share of a core, as a small machine of its own would have.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A cgroup of its own with a CPU quota; the processes moved into it (every thread, and what they start later) share the quota. */
export interface CappedGroup {
  path: string;
  add(pid: number): void;
  /** Scheduler periods so far, and in how many the group ran out of quota (the cap biting). */
  throttling(): { periods: number; throttled: number };
  /** Removes the group; its processes must have exited. */
  remove(): Promise<void>;
}

export interface CpuCaps {
  /** 'cgroup v1 cpu.cfs_quota_us' or 'cgroup v2 cpu.max', and where the groups go. */
  describe: string;
  create(name: string, share: number): CappedGroup;
}

const PERIOD_US = 100_000;

/** The fields of a cgroup's cpu.stat as numbers. */
function cpuStat(dir: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of readFileSync(join(dir, 'cpu.stat'), 'utf8').split('\n')) {
    const [k, v] = line.split(' ');
    if (k && v !== undefined) out[k] = Number(v);
  }
  return out;
}

function group(dir: string, quota: (share: number) => [file: string, text: string], share: number): CappedGroup {
  mkdirSync(dir);
  try {
    const [file, text] = quota(share);
    writeFileSync(join(dir, file), text);
  } catch (err) {
    rmdirSync(dir);
    throw err;
  }
  return {
    path: dir,
    add: (pid) => writeFileSync(join(dir, 'cgroup.procs'), String(pid)),
    throttling: () => {
      const s = cpuStat(dir);
      return { periods: s.nr_periods ?? 0, throttled: s.nr_throttled ?? 0 };
    },
    async remove() {
      // A process that has just been reaped can keep its group busy for a moment.
      for (let i = 0; ; i++) {
        try {
          rmdirSync(dir);
          return;
        } catch (err) {
          if (i >= 50 || (err as NodeJS.ErrnoException).code !== 'EBUSY') throw err;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    },
  };
}

/** Where each cgroup hierarchy is mounted: [type, mount point, options] from /proc/mounts. */
function cgroupMounts(): { type: string; at: string; options: string[] }[] {
  return readFileSync('/proc/mounts', 'utf8').split('\n').map((l) => l.split(' '))
    .filter((f) => f[2] === 'cgroup' || f[2] === 'cgroup2')
    .map((f) => ({ type: f[2], at: f[1], options: f[3].split(',') }));
}

/**
 * The cpu controller as this process may use it, tried with a probe group; or why not
 * (no Linux, no controller, not delegated, not root), in words to print.
 */
export function cpuCaps(prefix: string): CpuCaps | { unavailable: string } {
  if (process.platform !== 'linux') return { unavailable: `cgroups are Linux only (this is ${process.platform})` };
  let mounts;
  try {
    mounts = cgroupMounts();
  } catch (err) {
    return { unavailable: `cannot read /proc/mounts: ${(err as Error).message}` };
  }
  const v1 = mounts.find((m) => m.type === 'cgroup' && m.options.includes('cpu'));
  const v2 = mounts.find((m) => m.type === 'cgroup2' && m.at === '/sys/fs/cgroup');
  let caps: CpuCaps;
  if (v1 && existsSync(join(v1.at, 'cpu.cfs_quota_us'))) {
    caps = {
      describe: `cgroup v1 cpu.cfs_quota_us under ${v1.at}`,
      create: (name, share) => group(join(v1.at, name), (s) => {
        writeFileSync(join(v1.at, name, 'cpu.cfs_period_us'), String(PERIOD_US));
        return ['cpu.cfs_quota_us', String(Math.round(s * PERIOD_US))];
      }, share),
    };
  } else if (v2) {
    const controllers = (() => {
      try {
        return readFileSync(join(v2.at, 'cgroup.controllers'), 'utf8').trim().split(/\s+/);
      } catch {
        return [];
      }
    })();
    if (!controllers.includes('cpu')) return { unavailable: `cgroup v2 at ${v2.at} does not offer the cpu controller (cgroup.controllers: ${controllers.join(' ') || 'none'})` };
    try {
      const subtree = readFileSync(join(v2.at, 'cgroup.subtree_control'), 'utf8').trim().split(/\s+/);
      if (!subtree.includes('cpu')) writeFileSync(join(v2.at, 'cgroup.subtree_control'), '+cpu');
    } catch (err) {
      return { unavailable: `cannot enable the cpu controller for child groups of ${v2.at} (${(err as Error).message})` };
    }
    caps = {
      describe: `cgroup v2 cpu.max under ${v2.at}`,
      create: (name, share) => group(join(v2.at, name), (s) => ['cpu.max', `${Math.round(s * PERIOD_US)} ${PERIOD_US}`], share),
    };
  } else {
    return { unavailable: 'no cgroup cpu controller is mounted (neither a cgroup v1 hierarchy with cpu nor cgroup v2 at /sys/fs/cgroup)' };
  }
  try {
    const probe = caps.create(`${prefix}-probe`, 0.5);
    probe.throttling();
    rmdirSync(probe.path);
  } catch (err) {
    return { unavailable: `cannot create a capped group with ${caps.describe} (${(err as Error).message}; it needs root or a delegated cgroup)` };
  }
  return caps;
}
