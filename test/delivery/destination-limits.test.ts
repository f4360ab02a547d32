// A destination's own limits: `max_concurrency` caps the requests in flight to it (above or
// below the server's), `timeout_ms` replaces the server's timeout, and after a timeout the
// lane waits less on the next hang (lane-timeouts.ts). Receivers are loopback doubles that
// hang on some requests; the assertions are on what reached them and on the recorded attempts.
import { expect } from 'chai';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { waitFor } from '../helpers/test-server.ts';
import type { AttemptView } from '../../src/delivery/types.ts';
import { checkout, createFixture, type Fixture } from './delivery-fixture.ts';

describe('delivery: a destination\'s max_concurrency and timeout_ms', function () {
  this.timeout(40_000);
  let f: Fixture;
  const doubles: DestinationDouble[] = [];
  const double = async () => {
    const d = await startDestinationDouble();
    doubles.push(d);
    return d;
  };

  beforeEach(async () => (f = await createFixture()));
  afterEach(async () => {
    await f.close();
    for (const d of doubles.splice(0)) await d.close();
  });

  /** The attempts recorded for a destination, oldest first, with the event id each carried. */
  async function attemptsOf(destinationId: string): Promise<(AttemptView & { eventId: string | null })[]> {
    const all = [];
    for (const d of await f.store.deliveries.list({ destinationId, limit: 100 })) {
      for (const a of await f.store.deliveries.attempts(d.id)) all.push({ ...a, eventId: d.eventId });
    }
    return all.sort((x, y) => x.id - y.id);
  }

  it('sends at most max_concurrency requests at once, below and above the server\'s 4', async () => {
    const scriptId = await f.account();
    const [two, six] = [await double(), await double()];
    two.otherwise({ hang: true });
    six.otherwise({ hang: true });
    await f.destination(scriptId, 'webhook', two.url, { max_concurrency: 2 });
    await f.destination(scriptId, 'webhook', six.url, { max_concurrency: 6 });
    for (let i = 0; i < 12; i++) await f.ingest(scriptId, checkout(`ORD-${i}`));
    const d = f.dispatcher({ sender: f.sender(30_000), sendTimeoutMs: 30_000, perDestinationConcurrency: 4 });
    await d.start();
    d.wake();
    // Both lanes got the same work at once; by the time six requests hang at one, the other has sent all it may.
    await six.waitFor(() => six.requests.length === 6, 10_000, 'six requests in flight');
    await two.waitFor(() => two.requests.length >= 2, 10_000, 'two requests in flight');
    expect(two.requests, 'requests in flight with max_concurrency 2').to.have.length(2);
    expect(six.requests, 'requests in flight with max_concurrency 6').to.have.length(6);
  });

  it('gives up on a hanging request after its timeout_ms, not the server\'s timeout', async () => {
    const scriptId = await f.account();
    const hook = await double();
    hook.script({ hang: true });
    const dest = await f.destination(scriptId, 'webhook', hook.url, { timeout_ms: 1_000 });
    await f.ingest(scriptId, checkout('ORD-1'));
    const d = f.dispatcher({ sender: f.sender(30_000), sendTimeoutMs: 30_000 });
    await d.start();
    d.wake();
    const ended = await waitFor(async () => (await attemptsOf(dest.id)).length > 0, 15_000, 50);
    expect(ended, 'the hanging attempt ended well before the server\'s 30 s').to.equal(true);
    const [attempt] = await attemptsOf(dest.id);
    expect(attempt).to.include({ errorClass: 'timeout', outcome: 'retryable' });
    expect(attempt.message).to.match(/\(limit 1000 ms\)$/);
  });

  it('after a timeout, waits less on the next hangs: the limit is shortened, while answers still get through', async () => {
    const scriptId = await f.account();
    const hook = await double();
    const hangs = new Set(['ORD-0', 'ORD-2', 'ORD-4']);
    hook.otherwise((req) => (hangs.has(String(req.json<{ id: string }>().id)) ? { hang: true } : { status: 200, body: {} }));
    const dest = await f.destination(scriptId, 'webhook', hook.url, { timeout_ms: 5_000, max_concurrency: 1 });
    for (let i = 0; i < 6; i++) await f.ingest(scriptId, checkout(`ORD-${i}`));
    const d = f.dispatcher({ sender: f.sender(30_000), sendTimeoutMs: 30_000 });
    await d.start();
    d.wake();
    const done = await waitFor(async () => (await attemptsOf(dest.id)).length === 6, 30_000, 50);
    expect(done, 'one attempt per event').to.equal(true);
    const attempts = await attemptsOf(dest.id);
    expect(attempts.filter((a) => a.outcome === 'success').map((a) => a.eventId).sort()).to.deep.equal(['ORD-1', 'ORD-3', 'ORD-5']);
    const timeouts = attempts.filter((a) => a.errorClass === 'timeout');
    expect(timeouts.map((a) => a.eventId).sort()).to.deep.equal(['ORD-0', 'ORD-2', 'ORD-4']);
    // The first hang is waited for in full; every later one under a shorter limit.
    expect(timeouts[0].message).to.match(/\(limit 5000 ms\)$/);
    for (const a of timeouts.slice(1)) {
      const m = /\(limit (\d+) ms, shortened after a recent timeout\)$/.exec(a.message ?? '');
      expect(m, a.message ?? '').to.not.equal(null);
      expect(Number(m![1])).to.be.below(5_000);
    }
  });
});
