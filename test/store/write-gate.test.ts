import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import { threadId, Worker } from 'node:worker_threads';
import { processWriteGate, writeGateOn } from '../../src/store/sqlite/write-gate.ts';

const words = () => new Int32Array(new SharedArrayBuffer(8));

describe('SQLite write gate', () => {
  it('runs the transaction holding the gate and frees it after, also when it throws', () => {
    const w = words();
    const gate = writeGateOn(w);
    let inside = -1;
    expect(gate.run(() => { inside = Atomics.load(w, 0); return 7; }, { urgent: false, waitMs: 100 })).to.equal(7);
    expect(inside, 'the holder\'s thread id + 1').to.equal(threadId + 1);
    expect(Atomics.load(w, 0)).to.equal(0);
    expect(() => gate.run(() => { throw new Error('boom'); }, { urgent: true, waitMs: 100 })).to.throw('boom');
    expect(Atomics.load(w, 0)).to.equal(0);
    expect(gate.overruns).to.equal(0);
  });

  it('a holder that never lets go delays others only by their bound: they go ahead (SQLite still locks) and do not free its hold', () => {
    const w = words();
    Atomics.store(w, 0, 42 + 1); // held by thread 42, gone
    const gate = writeGateOn(w);
    let ran = false;
    gate.run(() => { ran = true; }, { urgent: true, waitMs: 10 });
    expect(ran).to.equal(true);
    expect(gate.overruns).to.equal(1);
    expect(Atomics.load(w, 0)).to.equal(43);
    expect(gate.releaseHeldBy(41), 'not the holder').to.equal(false);
    expect(gate.releaseHeldBy(42)).to.equal(true);
    gate.run(() => undefined, { urgent: true, waitMs: 1000 });
    expect(gate.overruns).to.equal(1);
  });

  it('a non-urgent transaction does not take a free gate while an urgent one waits for it', () => {
    const w = words();
    const gate = writeGateOn(w);
    Atomics.store(w, 1, 1); // an intake commit waiting
    let held = -1;
    gate.run(() => { held = Atomics.load(w, 0); }, { urgent: false, waitMs: 15 });
    expect(held, 'went ahead without the gate after its bound').to.equal(0);
    expect(gate.overruns).to.equal(1);
    Atomics.store(w, 1, 0);
    gate.run(() => { held = Atomics.load(w, 0); }, { urgent: false, waitMs: 15 });
    expect(held).to.equal(threadId + 1);
    expect(gate.overruns).to.equal(1);
  });

  it('is one gate for the process: a worker thread holding it makes the main thread wait, and its release lets the main thread in', async () => {
    const gate = processWriteGate(); // before the worker starts, as the server does
    const signal = new Int32Array(new SharedArrayBuffer(4));
    const modulePath = fileURLToPath(new URL('../../src/store/sqlite/write-gate.ts', import.meta.url));
    const worker = new Worker(`
      require('tsx/cjs');
      const { parentPort, workerData } = require('node:worker_threads');
      const { processWriteGate } = require(workerData.modulePath);
      processWriteGate().run(() => {
        parentPort.postMessage('holding');
        Atomics.wait(workerData.signal, 0, 0, 10000);
      }, { urgent: false, waitMs: 1000 });
      parentPort.postMessage('released');
    `, { eval: true, workerData: { modulePath, signal } });
    const messages: string[] = [];
    const arrived = (m: string) => new Promise<void>((resolve) => {
      const check = () => { if (messages.includes(m)) resolve(); else worker.once('message', (x: string) => { messages.push(x); check(); }); };
      check();
    });
    try {
      await arrived('holding');
      const before = gate.overruns;
      gate.run(() => undefined, { urgent: true, waitMs: 30 });
      expect(gate.overruns - before, 'the worker held the same gate').to.equal(1);
      Atomics.store(signal, 0, 1);
      Atomics.notify(signal, 0);
      await arrived('released');
      gate.run(() => undefined, { urgent: true, waitMs: 5000 });
      expect(gate.overruns - before).to.equal(1);
    } finally {
      Atomics.store(signal, 0, 1);
      Atomics.notify(signal, 0);
      await worker.terminate();
    }
  });

  it('a worker thread that dies holding the gate (terminated inside its transaction) leaves it to be freed by the thread that started it', async () => {
    const gate = processWriteGate();
    const modulePath = fileURLToPath(new URL('../../src/store/sqlite/write-gate.ts', import.meta.url));
    const worker = new Worker(`
      require('tsx/cjs');
      const { parentPort, workerData } = require('node:worker_threads');
      const { processWriteGate } = require(workerData.modulePath);
      processWriteGate().run(() => {
        parentPort.postMessage('holding');
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); // forever
      }, { urgent: false, waitMs: 1000 });
    `, { eval: true, workerData: { modulePath } });
    const tid = worker.threadId;
    await new Promise<void>((resolve) => worker.once('message', () => resolve()));
    await worker.terminate();
    const before = gate.overruns;
    gate.run(() => undefined, { urgent: true, waitMs: 20 });
    expect(gate.overruns - before, 'still held by the dead thread').to.equal(1);
    expect(gate.releaseHeldBy(tid)).to.equal(true);
    gate.run(() => undefined, { urgent: true, waitMs: 5000 });
    expect(gate.overruns - before).to.equal(1);
  });
});
