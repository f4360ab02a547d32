// A destination removed while its lane is sending: the delivery the lane held is canceled
// once the lane hands it back, so no pending row is left to pin its event. And the log
// lines an operator sees when deliveries fail.
import { expect } from 'chai';
import { createRetryPolicy } from '../../src/delivery/retry-policy.ts';
import { waitFor } from '../helpers/test-server.ts';
import { checkout, useFixtureWithDouble } from './delivery-fixture.ts';

describe('delivery: removing a destination mid-send', function () {
  this.timeout(20_000);
  const t = useFixtureWithDouble();

  it('the held delivery ends skipped (destination_removed) after the lane stops', async () => {
    const scriptId = await t.f.account();
    const dest = await t.f.destination(scriptId, 'ga4', t.dbl.url);
    t.dbl.otherwise({ hang: true });
    const d = t.f.dispatcher({ clock: Date.now, refreshMs: 20, sendTimeoutMs: 300 });
    await d.start();
    await t.f.ingest(scriptId, checkout('ORD-HELD'));
    expect(await waitFor(() => t.dbl.requests.length === 1, 5_000), 'the lane is sending').to.equal(true);
    const removed = await t.f.store.destinations.remove(scriptId, dest.id);
    expect(removed, 'leased by the lane: not canceled by the removal itself').to.deep.equal({ removed: true, canceled: 0 });
    const canceled = await waitFor(async () => {
      const [row] = await t.f.store.deliveries.list({ destinationId: dest.id });
      return row?.status === 'skipped' && row.skipReason === 'destination_removed';
    }, 5_000);
    expect(canceled).to.equal(true);
    await d.stop(1_000);
  });
});

describe('delivery: failure log lines', function () {
  this.timeout(20_000);
  const t = useFixtureWithDouble();

  it('a failed attempt with retries left is logged at info; the attempt that makes it dead at warn', async () => {
    const scriptId = await t.f.account();
    await t.f.destination(scriptId, 'ga4', t.dbl.url);
    t.dbl.otherwise({ status: 503 });
    const lines: { level: string; msg: string; obj: Record<string, unknown> }[] = [];
    const at = (level: string) => (obj: object, msg?: string) => void lines.push({ level, msg: msg ?? '', obj: obj as Record<string, unknown> });
    const d = t.f.dispatcher({ logger: { info: at('info'), warn: at('warn'), error: at('error') }, schedule: createRetryPolicy({ scheduleMs: [1_000], random: () => 0.5 }) });
    await t.f.ingest(scriptId, checkout('ORD-LOG'));
    await d.runOnce();
    t.f.clock.advance(1_000);
    await d.runOnce();
    const failures = lines.filter((l) => l.msg.startsWith('delivery'));
    expect(failures.map((l) => [l.level, l.msg])).to.deep.equal([
      ['info', 'delivery attempt failed; will retry'],
      ['warn', 'delivery dead: retries exhausted; `tracklane deliveries replay` sends it again'],
    ]);
    expect(failures[0].obj).to.include({ destination_type: 'ga4', status_code: 503, error: 'GA4 answered HTTP 503', deliveries: 1, attempts: 1 });
    expect(failures[0].obj.event_ids).to.deep.equal(['ORD-LOG']);
    expect(failures[0].obj.next_attempt_at).to.equal(new Date(t.f.clock()).toISOString());
    expect(failures[1].obj).to.include({ status: 'dead', attempts: 2 });
  });
});
