// The crash window: what a process killed now would send again is what its lanes sent but
// have not recorded yet. A lane must not run ahead of its records: with commits slower than
// the receiver (a loaded database), it waits for them instead of sending on, so the deliveries
// sent but not recorded stay within a bound (a lane's slots and as many answers awaiting their
// commit), not the seconds of traffic a record backlog holds. The receiver here answers at once
// and each commit waits for 30 more sends (or 25 ms when none come): a lane that keeps sending
// while its records wait shows a window of 30 and more.
import { expect } from 'chai';
import type { HttpSender, SendResult } from '../../src/delivery/http-sender.ts';
import type { AttemptRecord } from '../../src/delivery/types.ts';
import { waitFor } from '../helpers/test-app.ts';
import { STORE_KINDS, STORE_LABEL, storeHarness } from '../helpers/stores.ts';
import { checkout, createFixture, type Fixture } from './delivery-fixture.ts';

const EVENTS = 120;

for (const kind of STORE_KINDS) describe(`delivery (${STORE_LABEL[kind]}): a lane does not run ahead of its attempt records (crash window)`, function () {
  this.timeout(20_000);
  const harness = storeHarness(kind);
  let f: Fixture;
  afterEach(async () => f?.close());

  it('keeps the deliveries sent but not recorded within its bound while commits lag, and records every one', async () => {
    f = await createFixture({ open: () => harness.open() });
    const scriptId = await f.account();
    await f.destination(scriptId, 'webhook', 'https://hooks.example.com/in');
    for (let i = 0; i < EVENTS; i++) await f.ingest(scriptId, checkout(`W-${i}`));

    let sent = 0;
    let recorded = 0;
    let widest = 0;
    const sender: HttpSender = {
      async send(req) {
        sent += req.eventIds.length;
        widest = Math.max(widest, sent - recorded);
        return { kind: 'response', response: { status: 200, headers: {}, body: '' }, latencyMs: 1 } satisfies SendResult;
      },
      async close() {},
    };
    const deliveries = f.store.deliveries;
    const recordAttempts = deliveries.recordAttempts.bind(deliveries);
    deliveries.recordAttempts = async (records: readonly AttemptRecord[]) => {
      const from = sent;
      await waitFor(() => sent >= from + 30, 25, 1);
      const results = await recordAttempts(records);
      recorded += records.reduce((n, r) => n + r.updates.length, 0);
      return results;
    };

    const d = f.dispatcher({ sender, perDestinationConcurrency: 4 });
    await d.start();
    expect(await waitFor(() => recorded >= EVENTS, 15_000), `every delivery recorded (${recorded} of ${EVENTS})`).to.equal(true);
    expect(sent, 'each sent once').to.equal(EVENTS);
    // Four requests in flight and four answers awaiting their commit, at most.
    expect(widest, 'deliveries sent but not recorded, at most').to.be.at.most(8);
  });
});
