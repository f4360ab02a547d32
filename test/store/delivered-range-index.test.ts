// Whether an attempt lists a pair (delivered-pairs.ts listedPair: every handed-off delivery an
// attempt record settles asks it) reads only the attempts that may list it, not one heap row per
// attempt recorded for a later event of the destination (PostgreSQL version 17: first_seq in the
// index). Counted in buffers (EXPLAIN ANALYZE BUFFERS), and answered as before.
import { expect } from 'chai';
import { listedPair } from '../../src/store/postgres/delivered-pairs.ts';
import { usePgStore } from '../helpers/pg-store-fixture.ts';

const DEST = 'dst_0000000000000001';

describe('PostgreSQL: is a pair listed by an attempt', function () {
  this.timeout(30_000);
  const t = usePgStore();

  it('reads the attempts that may list it, not every attempt recorded for a later event', async () => {
    // One-event attempts (webhook lanes) of four destinations, recorded in turn, each listing its event's seq, 1,001 to 3,000.
    await t.raw.query(`INSERT INTO delivery_attempts (destination_id, attempted_at, latency_ms, outcome, events, script_id, delivered, first_seq, last_seq)
      SELECT d, s, 5, 'success', 1, 'ACCT0001', json_build_array(json_build_array(s, 0))::text, s, s
      FROM generate_series(1001, 3000) AS s, unnest(ARRAY[$1, 'dst_2', 'dst_3', 'dst_4']) AS d ORDER BY s`, [DEST]);
    await t.raw.query('ANALYZE delivery_attempts');
    const sql = `SELECT ${listedPair('$1::text', '$2::bigint', '0')} AS listed`;
    expect((await t.raw.query(sql, [DEST, 1000])).rows[0].listed, 'seq 1000: none lists it').to.equal(false);
    expect((await t.raw.query(sql, [DEST, 1500])).rows[0].listed, 'seq 1500: its attempt lists it').to.equal(true);
    const { rows: [plan] } = await t.raw.query<{ 'QUERY PLAN': { Plan: Record<string, unknown> }[] }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, [DEST, 1000]);
    const hits = (n: Record<string, unknown>): number => Number(n['Shared Hit Blocks'] ?? 0) + Number(n['Shared Read Blocks'] ?? 0);
    // Seq 1000 has 2,000 attempts of its destination above it within DELIVERED_SEQ_SPAN: their
    // index entries are read either way (~16 pages), and before, each one's heap row too (~70 pages).
    expect(hits(plan['QUERY PLAN'][0].Plan), 'blocks read').to.be.below(30);
  });
});
