// The hashing pool's gate: idle cores from the kernel's CPU time counters, read at most
// once a window.
import { expect } from 'chai';
import { idleCoresBetween, machineCpuTimes, whenCoresIdle, type CpuTimes } from '../../src/workers/idle-cores.ts';

const times = (idle: number, total: number, cores = 2): CpuTimes => ({ idle, total, cores });

describe('workers: idle cores', () => {
  it('counts idle cores as the idle share of the elapsed CPU time times the core count', () => {
    expect(idleCoresBetween(times(0, 0), times(1000, 2000))).to.equal(1);
    expect(idleCoresBetween(times(500, 1000), times(500, 3000))).to.equal(0);
    expect(idleCoresBetween(times(0, 0, 4), times(3000, 4000, 4))).to.equal(3);
    expect(idleCoresBetween(times(10, 10), times(10, 10))).to.equal(0); // no time passed
  });

  it('reads this machine: every core counted, idle within total', () => {
    const t = machineCpuTimes();
    expect(t.cores).to.be.greaterThan(0);
    expect(t.idle).to.be.within(0, t.total);
  });

  it('answers from two readings a window apart: false until then, cached within the window', () => {
    let clock = 0;
    let reading = times(0, 0);
    let reads = 0;
    const idle = whenCoresIdle(1, { windowMs: 1000, now: () => clock, read: () => { reads++; return reading; } });
    expect(idle()).to.equal(false); // one reading: nothing to compare yet
    reading = times(1500, 2000); // 1.5 of 2 cores idle since
    clock = 999;
    expect(idle()).to.equal(false); // still the first window
    clock = 1000;
    expect(idle()).to.equal(true);
    reading = times(1600, 4000); // then 0.1 core idle
    clock = 1500;
    expect(idle()).to.equal(true); // cached until the window ends
    clock = 2000;
    expect(idle()).to.equal(false);
    expect(reads).to.equal(3);
  });
});
