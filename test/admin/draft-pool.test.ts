// The draft pool's own queue, with tasks held by a stand-in executor: one more than the
// queue holds is refused at once (nothing submitted), and a task's time limit starts when it
// gets its thread, so one that waited behind a task stopped for its time still runs.
import { expect } from 'chai';
import { createDraftPool, DraftPoolBusy, DraftStopped, MAX_QUEUED, type DraftExecutor } from '../../src/admin/draft-pool.ts';
import type { DraftRequest, DraftResult } from '../../src/pipeline/draft-preview.ts';
import { waitFor } from '../helpers/test-server.ts';

const REQUEST: DraftRequest = { kind: 'preview', type: 'webhook', lists: [], subjects: [] };
const DONE: DraftResult = { kind: 'preview', before: [], after: [] };

/** An executor whose tasks run until the test finishes them, or until their signal aborts (as piscina ends the thread). */
function heldExecutor() {
  const started: { signal: AbortSignal; abortedAtStart: boolean; finish(): void }[] = [];
  const execute: DraftExecutor = (_task, signal) => new Promise<DraftResult>((resolve, reject) => {
    started.push({ signal, abortedAtStart: signal.aborted, finish: () => resolve(DONE) });
    signal.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' })));
  });
  return { started, execute };
}

describe('admin: the rule-draft pool', () => {
  it(`refuses one more than ${MAX_QUEUED} waiting at once, before submitting anything; the waiting run in turn`, async () => {
    const ex = heldExecutor();
    const pool = createDraftPool({ pluginsDir: '', threads: 1, execute: ex.execute });
    const first = pool.run(REQUEST);
    const waiting = Array.from({ length: MAX_QUEUED }, () => pool.run(REQUEST));
    let refused: unknown;
    await pool.run(REQUEST).catch((e) => (refused = e));
    expect(refused).to.be.instanceOf(DraftPoolBusy);
    expect(ex.started, 'only the first was given a thread').to.have.length(1);
    ex.started[0].finish();
    expect(await first).to.deep.equal(DONE);
    for (let i = 0; i < MAX_QUEUED; i++) {
      await waitFor(() => ex.started.length === i + 2);
      ex.started[i + 1].finish();
      expect(await waiting[i]).to.deep.equal(DONE);
    }
    // Room again: the next one runs.
    const again = pool.run(REQUEST);
    await waitFor(() => ex.started.length === MAX_QUEUED + 2);
    ex.started[MAX_QUEUED + 1].finish();
    expect(await again).to.deep.equal(DONE);
  });

  it('starts a task\'s clock when it gets its thread: one queued behind a task stopped for its time still runs', async () => {
    const ex = heldExecutor();
    const pool = createDraftPool({ pluginsDir: '', threads: 1, timeLimitMs: 0, abortGraceMs: 50, execute: ex.execute });
    const stuck = pool.run(REQUEST).catch((e) => e);
    const queued = pool.run(REQUEST);
    // The first runs past its limit and is stopped; the second waited all that time.
    expect(await stuck).to.be.instanceOf(DraftStopped);
    await waitFor(() => ex.started.length === 2);
    expect(ex.started[1].abortedAtStart, 'a fresh clock').to.equal(false);
    ex.started[1].finish();
    expect(await queued).to.deep.equal(DONE);
  });
});
