// The operator's view, through the real CLI (`node src/cli/bin.mjs`) on the same database a
// dispatcher works on: list, show, stats (paused flagged), replay without double sends, resume.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { createRetryPolicy } from '../../src/delivery/retry-policy.ts';
import { expectFailure, type CliResult } from '../cli/run-cli.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { shippedFolderEnv } from '../helpers/shipped-folders.ts';
import { checkout, createFixture, ROOT, type Fixture } from './delivery-fixture.ts';

describe('delivery: deliveries and stats CLI', function () {
  this.timeout(30_000);
  let f: Fixture;
  let ga: DestinationDouble;
  let meta: DestinationDouble;
  let scriptId: string;
  let gaId: string;
  let metaId: string;

  let maxReplay = '10000';
  const cli = (...args: string[]) => new Promise<CliResult>((resolve) => {
    execFile(process.execPath, [join(ROOT, 'src/cli/bin.mjs'), ...args], {
      cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...shippedFolderEnv(), DATA_DIR: f.dir, DATABASE_URL: '', PORT: '', MAX_REPLAY: maxReplay },
    }, (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }));
  });
  const json = async <T = any>(...args: string[]): Promise<T> => {
    const r = await cli(...args, '--json');
    expect(r.stderr, args.join(' ')).to.equal('');
    expect(r.code, args.join(' ')).to.equal(0);
    return JSON.parse(r.stdout) as T;
  };
  const sent = (d: DestinationDouble, eventId: string) => d.requests.filter((r) => r.body.includes(eventId)).length;

  before(async () => {
    f = await createFixture();
    ga = await startDestinationDouble();
    meta = await startDestinationDouble();
    scriptId = await f.account();
    gaId = (await f.destination(scriptId, 'ga4', ga.url)).id;
    metaId = (await f.destination(scriptId, 'meta-capi', meta.url)).id;
    ga.otherwise((req) => ({ status: req.body.includes('BAD-1') ? 500 : 204 }));
    meta.otherwise({ status: 503 });
    await f.ingest(scriptId, checkout('OK-1'));
    await f.ingest(scriptId, checkout('BAD-1'));
    // No retries (dead after one failure); Meta pauses after its second failing attempt.
    const d = f.dispatcher({ schedule: createRetryPolicy({ scheduleMs: [] }), pauseAfterMs: 1 });
    await d.runOnce();
    f.clock.advance(10);
    await f.ingest(scriptId, checkout('LATE-1'));
    await d.runOnce(); // Meta fails again: paused
    await f.ingest(scriptId, checkout('LATE-2'));
    await d.runOnce(); // LATE-2 waits for Meta
  });
  after(async () => {
    await f.close();
    await ga.close();
    await meta.close();
  });

  it('deliveries list prints the interface fields, filters, and flags paused destinations', async () => {
    const all = await json<Record<string, unknown>[]>('deliveries', 'list', '--account', scriptId);
    expect(all).to.have.length(8);
    for (const d of all) {
      expect(d).to.include.all.keys('id', 'event_id', 'destination_id', 'destination_type', 'status', 'attempts', 'last_status_code', 'last_error', 'next_attempt_at', 'paused');
    }
    const dead = await json('deliveries', 'list', '--status', 'dead');
    expect(dead.map((d: any) => [d.event_id, d.destination_type])).to.have.deep.members([['BAD-1', 'ga4'], ['OK-1', 'meta-capi'], ['BAD-1', 'meta-capi'], ['LATE-1', 'meta-capi']]);
    const [ok] = await json('deliveries', 'list', '--event-id', 'OK-1', '--status', 'delivered');
    expect(ok).to.include({ destination_id: gaId, destination_type: 'ga4', attempts: 1, last_status_code: 204, last_error: null, next_attempt_at: null, paused: false });
    const late = await json('deliveries', 'list', '--event-id', 'LATE-2', '--status', 'pending');
    expect(late.map((d: any) => [d.destination_id, d.paused])).to.deep.equal([[metaId, true]]);
    expectFailure(await cli('deliveries', 'list', '--status', 'bogus', '--json'), 1, /--status must be one of/);
    expectFailure(await cli('deliveries', 'list', '--account', 'NOPE0000', '--json'), 1, /NOPE0000/);
  });

  it('deliveries show gives one delivery with its attempts', async () => {
    const [bad] = await json('deliveries', 'list', '--event-id', 'BAD-1', '--status', 'dead');
    const shown = await json('deliveries', 'show', String(bad.id));
    expect(shown).to.include({ id: bad.id, status: 'dead' });
    expect(shown.attempts_log.map((a: any) => [a.status_code, a.outcome])).to.deep.equal([[bad.destination_type === 'ga4' ? 500 : 503, 'retryable']]);
    expectFailure(await cli('deliveries', 'show', '999999', '--json'), 1, /no delivery with id 999999/);
  });

  it('stats counts deliveries by status per destination and lists paused destinations', async () => {
    const s = await json('stats', '--account', scriptId);
    expect(s.paused_destinations).to.deep.equal([metaId]);
    const byId = Object.fromEntries(s.destinations.map((d: any) => [d.destination_id, d]));
    expect(byId[gaId].counts).to.deep.equal({ pending: 0, delivered: 3, failed: 0, dead: 1, skipped: 0 });
    expect(byId[metaId]).to.include({ paused: true, type: 'meta-capi' });
    expect(byId[metaId].counts).to.include({ pending: 1, dead: 3 });
    expect(byId[metaId].oldest_pending_age_seconds).to.be.a('number');
    expect(s.dispatch_backlog).to.equal(0);
  });

  it('replay re-sends dead ones and never a delivered one without --force', async () => {
    const before = { ok: sent(ga, 'OK-1'), bad: sent(ga, 'BAD-1') };
    ga.otherwise({ status: 204 });
    expect(await json('deliveries', 'replay', '--destination', gaId)).to.deep.equal({ replayed: 1, left: 0, max_per_call: 10000, statuses: ['dead', 'failed'] });
    await f.dispatcher({ clock: Date.now }).runOnce(); // the CLI re-queues on the real clock
    expect(sent(ga, 'BAD-1')).to.equal(before.bad + 1);
    expect(sent(ga, 'OK-1'), 'the delivered one is not sent again').to.equal(before.ok);
    expect(await json('deliveries', 'replay', '--destination', gaId), 'nothing left to replay').to.deep.include({ replayed: 0 });

    expectFailure(await cli('deliveries', 'replay', '--status', 'delivered', '--all', '--json'), 1, /needs --force/);
    expect(await json('deliveries', 'replay', '--status', 'delivered', '--event-id', 'OK-1', '--destination', gaId, '--force'))
      .to.deep.equal({ replayed: 1, left: 0, max_per_call: 10000, statuses: ['delivered'] });
    await f.dispatcher({ clock: Date.now }).runOnce(); // the CLI re-queues on the real clock
    expect(sent(ga, 'OK-1')).to.equal(before.ok + 1);
  });

  it('deliveries resume un-pauses a destination and sends its backlog', async () => {
    meta.otherwise({ status: 200, body: { events_received: 1 } });
    expect(await json('deliveries', 'resume', metaId)).to.deep.equal({ destination_id: metaId, was_paused: true, due: 1 });
    await f.dispatcher({ clock: Date.now }).runOnce(); // the CLI re-queues on the real clock
    const [late] = await json('deliveries', 'list', '--event-id', 'LATE-2', '--destination', metaId);
    expect(late).to.include({ status: 'delivered', paused: false });
    expectFailure(await cli('deliveries', 'resume', 'dst_nope', '--json'), 1, /no destination "dst_nope"/);
  });

  it('a bulk replay needs a scope or --all, counts with --dry-run, and re-queues at most MAX_REPLAY per call', async () => {
    const dead = async () => (await json<any[]>('deliveries', 'list', '--destination', metaId, '--status', 'dead')).length;
    const before = await dead();
    expect(before).to.equal(3);
    expectFailure(await cli('deliveries', 'replay', '--json'), 1, /needs a scope: an account \(--account\) or a destination \(--destination\), or --all/);
    expectFailure(await cli('deliveries', 'replay', '--event-id', 'LATE-1', '--json'), 1, /needs a scope/);
    expect(await json('deliveries', 'replay', '--all', '--dry-run')).to.deep.equal({ would_replay: 3, max_per_call: 10000, statuses: ['dead', 'failed'] });
    expect(await json('deliveries', 'replay', '--account', scriptId, '--dry-run')).to.deep.include({ would_replay: 3 });
    expect(await dead(), 'a dry run changes nothing').to.equal(3);
    maxReplay = '2';
    try {
      expect(await json('deliveries', 'replay', '--destination', metaId)).to.deep.equal({ replayed: 2, left: 1, max_per_call: 2, statuses: ['dead', 'failed'] });
      expect(await dead()).to.equal(1);
      expect(await json('deliveries', 'replay', '--all')).to.deep.equal({ replayed: 1, left: 0, max_per_call: 2, statuses: ['dead', 'failed'] });
      expect(await dead()).to.equal(0);
    } finally {
      maxReplay = '10000';
    }
  });
});
