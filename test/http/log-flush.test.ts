// The server's log destination (src/logger.ts): lines are buffered and flushed at the latest
// LOG_FLUSH_MS after they were logged, by a timer that runs only while lines wait (sonic-boom's
// periodicFlush woke the HTTP thread ten times a second, idle or not).
import { expect } from 'chai';
import { flushAfter } from '../../src/logger.ts';
import { waitFor } from '../helpers/test-server.ts';

function buffered() {
  const calls: string[] = [];
  return {
    calls,
    out: { write: (line: string) => (calls.push(`write ${line}`), true), flush: () => void calls.push('flush'), flushSync: () => void calls.push('flushSync') },
  };
}

describe('log destination', () => {
  it('flushes once, `ms` after the first of the lines written since the last flush; nothing written, nothing flushed', async () => {
    const { calls, out } = buffered();
    const dest = flushAfter(out, 20);
    await new Promise((r) => setTimeout(r, 60));
    expect(calls, 'idle').to.deep.equal([]);
    dest.write('a');
    dest.write('b');
    expect(await waitFor(() => calls.includes('flush'), 1_000)).to.equal(true);
    await new Promise((r) => setTimeout(r, 60));
    expect(calls).to.deep.equal(['write a', 'write b', 'flush']);
    dest.write('c');
    expect(await waitFor(() => calls.length === 5, 1_000)).to.equal(true);
    expect(calls.slice(3)).to.deep.equal(['write c', 'flush']);
  });

  it('passes flush and flushSync through, and flushes nothing once the destination is ended', async () => {
    const { calls, out } = buffered();
    const ended = Object.assign(out, { destroyed: false });
    const dest = flushAfter(ended, 10);
    dest.flush();
    dest.flushSync();
    dest.write('x');
    ended.destroyed = true;
    await new Promise((r) => setTimeout(r, 50));
    expect(calls).to.deep.equal(['flush', 'flushSync', 'write x']);
  });
});
