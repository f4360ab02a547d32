// PostgreSQL's dispatch queue, the fan-out's side of delivery: accepted events claimed with
// FOR UPDATE SKIP LOCKED (with the rows an earlier, unfinished fan-out stored for them), a
// fan-out's rows committed with each event leaving the queue (or staying, leased, for its
// handoffs, or held), and events removed once their handed-off deliveries are all recorded
// (a row, or listed by the attempt that delivered them).
// The lanes' side: delivery-store.ts. Commits are relaxed like the rest of the bookkeeping.
import type pg from 'pg';
import { partKey, type DeliveryStore, type DispatchEvent, type FanOutResult } from '../delivery-contract.ts';
import { DELIVERED_SEQ_SPAN } from '../delivery-views.ts';
import { tx } from './connection.ts';
import { WORK_CHANNEL } from './notify.ts';
import { toPgEvent, type PgEventRow } from './rows.ts';

const relaxed = { relaxed: true };

/**
 * The deliveries of events $1 (seqs $2..$3, of accounts $5) an earlier fan-out settled: their rows,
 * and the pairs attempts list as delivered without one (delivery_attempts_delivered_seq, for each
 * destination of those accounts: an attempt lists seqs at most $4 below its last), a replayed pair (null) aside.
 */
const SETTLED = `SELECT event_seq, destination_id, part FROM deliveries WHERE event_seq = ANY($1::bigint[]) AND part IS NOT NULL
  UNION ALL
  SELECT (p.v->>0)::bigint, a.destination_id, (p.v->>1)::int FROM delivery_attempts a CROSS JOIN LATERAL jsonb_array_elements(a.delivered::jsonb) AS p(v)
  WHERE a.destination_id IN (SELECT id FROM destinations WHERE script_id = ANY($5::text[]))
    AND a.delivered IS NOT NULL AND a.last_seq >= $2 AND a.last_seq <= $3::bigint + $4 AND a.first_seq <= $3
    AND p.v <> 'null'::jsonb AND (p.v->>0)::bigint = ANY($1::bigint[])`;

/** A fan-out result with deliveries handed straight to a lane: its event stays queued until they have rows. */
const handsOff = (r: FanOutResult): boolean => r.deliveries.some((d) => d.handoff === true);

export function pgDispatchQueue(pool: pg.Pool): Pick<DeliveryStore, 'claimEvents' | 'completeFanOut' | 'finishEvents'> {
  return {
    async claimEvents(claimId, now, leaseMs, limit) {
      // Nothing claimable (an idle fan-out's look): one query, not a transaction of five round trips.
      const { rowCount } = await pool.query(
        'SELECT 1 FROM dispatch_queue WHERE lease_until IS NULL OR lease_until <= $2 OR lease_owner = $1 LIMIT 1', [claimId, now]);
      if (rowCount === 0) return [];
      return tx(pool, async (c) => {
        const { rows: due } = await c.query<{ event_seq: number; map_claims: number; lease_owner: string | null }>(
          `SELECT event_seq, map_claims, lease_owner FROM dispatch_queue WHERE lease_until IS NULL OR lease_until <= $2 OR lease_owner = $1
           ORDER BY event_seq LIMIT $3 FOR UPDATE SKIP LOCKED`, [claimId, now, limit]);
        // An event an earlier claim left unfinished is claimed alone (its own claim's retake is no interruption).
        const interrupted = new Map<number, number>();
        const take: number[] = [];
        for (const d of due) {
          const n = d.lease_owner === claimId ? Math.max(0, d.map_claims - 1) : d.map_claims;
          if (n > 0 && take.length > 0) break;
          take.push(d.event_seq);
          if (n > 0) {
            interrupted.set(d.event_seq, n);
            break;
          }
        }
        // SET reads the row as it was: a retake by the same claim adds no count.
        const { rows } = await c.query<PgEventRow>(`WITH leased AS (
            UPDATE dispatch_queue q SET lease_owner = $1, lease_until = $2,
              map_claims = q.map_claims + CASE WHEN q.lease_owner IS NOT DISTINCT FROM $1 THEN 0 ELSE 1 END
            WHERE q.event_seq = ANY($3::bigint[]) RETURNING q.event_seq, q.held_for)
          SELECT e.*, l.held_for AS queued_held_for FROM leased l JOIN events e ON e.seq = l.event_seq
          -- The events by their key as well: without it a batch of a few hundred was joined by reading all of events.
          WHERE e.seq = ANY($3::bigint[]) ORDER BY e.seq`, [claimId, now + leaseMs, take]);
        // Queue rows whose event was purged: nothing left to deliver.
        await c.query(`DELETE FROM dispatch_queue q WHERE q.lease_owner = $1 AND NOT EXISTS (SELECT 1 FROM events e WHERE e.seq = q.event_seq)`, [claimId]);
        // What an earlier, unfinished fan-out of these events settled (nothing for events fanned out the first time), in one
        // query for the batch: their rows, and the pairs attempts delivered with none (by destination and seq range).
        const stored = new Map<number, Set<string>>();
        if (rows.length > 0) {
          const seqs = rows.map((r) => Number(r.seq));
          const { rows: parts } = await c.query<{ event_seq: number; destination_id: string; part: number }>({ name: 'tl_claim_stored', text: SETTLED,
            values: [seqs, Math.min(...seqs), Math.max(...seqs), DELIVERED_SEQ_SPAN, [...new Set(rows.map((r) => r.script_id))]] });
          for (const p of parts) {
            let set = stored.get(p.event_seq);
            if (set === undefined) stored.set(p.event_seq, (set = new Set()));
            set.add(partKey(p.destination_id, p.part));
          }
        }
        return rows.map((r): DispatchEvent => {
          const held = (r as PgEventRow & { queued_held_for: string | null }).queued_held_for;
          const e: DispatchEvent = held === null ? { seq: r.seq, event: toPgEvent(r) } : { seq: r.seq, event: toPgEvent(r), heldFor: JSON.parse(held) as string[] };
          const parts = stored.get(r.seq);
          if (parts !== undefined) e.stored = parts;
          const n = interrupted.get(r.seq);
          if (n !== undefined) e.interrupted = n;
          return e;
        });
      }, relaxed);
    },

    async completeFanOut(claimId, now, results) {
      return tx(pool, async (c) => {
        // Events neither held nor handing off leave the queue (fenced on the lease); those that
        // handed deliveries off stay queued, leased to the claim, until those have rows
        // (finishEvents): their lease is checked and their mapping counted finished (map_claims 0).
        const unqueue: number[] = [];
        const keep: number[] = [];
        for (const r of results) if (r.held === undefined) (handsOff(r) ? keep : unqueue).push(r.seq);
        const ours = new Set<number>(); // the others' lease was lost: the new holder fans them out
        if (unqueue.length > 0 || keep.length > 0) {
          const { rows: fenced } = await c.query<{ event_seq: number }>(`WITH gone AS (
              DELETE FROM dispatch_queue WHERE event_seq = ANY($1::bigint[]) AND lease_owner = $3 RETURNING event_seq),
            kept AS (UPDATE dispatch_queue SET map_claims = 0 WHERE event_seq = ANY($2::bigint[]) AND lease_owner = $3 RETURNING event_seq)
            SELECT event_seq FROM gone UNION ALL SELECT event_seq FROM kept`, [unqueue, keep, claimId]);
          for (const f of fenced) ours.add(f.event_seq);
        }
        // Events held for some destinations stay queued for those, leased to the hold's claim.
        const holds = new Map<string, { claimId: string; leaseUntil: number; seqs: number[]; owed: string[] }>();
        for (const r of results) {
          if (r.held === undefined) continue;
          const k = `${r.held.claimId}\0${r.held.leaseUntil}`;
          let g = holds.get(k);
          if (g === undefined) holds.set(k, (g = { claimId: r.held.claimId, leaseUntil: r.held.leaseUntil, seqs: [], owed: [] }));
          g.seqs.push(r.seq);
          g.owed.push(JSON.stringify(r.held.destinationIds));
        }
        for (const g of holds.values()) {
          const { rows: kept } = await c.query<{ event_seq: number }>(`UPDATE dispatch_queue q SET held_for = x.owed, lease_owner = $3, lease_until = $4, map_claims = 0
            FROM unnest($1::bigint[], $2::text[]) AS x(seq, owed) WHERE q.event_seq = x.seq AND q.lease_owner = $5 RETURNING q.event_seq`,
          [g.seqs, g.owed, g.claimId, g.leaseUntil, claimId]);
          for (const k of kept) ours.add(k.event_seq);
        }
        const cols: unknown[][] = Array.from({ length: 12 }, () => []);
        const handedOff: number[] = [];
        for (const r of results) {
          if (!ours.has(r.seq)) continue;
          if (handsOff(r)) handedOff.push(r.seq);
          for (const d of r.deliveries) {
            if (d.handoff === true) continue; // its row is written when its attempt is recorded
            [r.seq, r.scriptId, d.destinationId, d.destinationType, r.eventId, d.part, d.item === null ? null : JSON.stringify(d.item),
              d.status, d.reason ?? null, d.status !== 'pending' ? null : now, d.message ?? null, r.receivedAt].forEach((v, k) => cols[k].push(v));
          }
        }
        const pendingByDestination = new Map<string, number>();
        if (cols[0].length > 0) {
          // A row an earlier fan-out of the event stored is left as it is (its item too); only the
          // pending rows inserted now are counted. The items of the rows inserted go to
          // delivery_items, keyed by the id each row got (found again by its unique key).
          const { rows: pending } = await c.query<{ destination_id: string; n: number }>(`WITH u AS (
              SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[], $8::text[], $9::text[],
                $10::bigint[], $11::text[], $12::bigint[]) WITH ORDINALITY AS u(s, a, d, t, e, p, i, st, r, n, m, rc, o)),
            ins AS (
              INSERT INTO deliveries (event_seq, script_id, destination_id, destination_type, event_id, part, status,
                skip_reason, attempts, next_attempt_at, last_error, received_at, created_at, updated_at)
              SELECT s, a, d, t, e, p, st, r, 0, n, m, rc, $13, $13 FROM u ORDER BY o
              ON CONFLICT (event_seq, destination_id, part) DO NOTHING RETURNING id, event_seq, destination_id, part, status),
            items AS (
              INSERT INTO delivery_items (delivery_id, item)
              SELECT id, i FROM (SELECT DISTINCT ON (ins.id) ins.id, u.i FROM ins
                JOIN u ON u.s = ins.event_seq AND u.d = ins.destination_id AND u.p = ins.part ORDER BY ins.id, u.o) AS f
              WHERE i IS NOT NULL
              ON CONFLICT (delivery_id) DO UPDATE SET item = excluded.item)
            SELECT destination_id, count(*)::int AS n FROM ins WHERE status = 'pending' GROUP BY destination_id`,
          [...cols, now]);
          for (const p of pending) pendingByDestination.set(p.destination_id, p.n);
        }
        if (pendingByDestination.size > 0) await c.query(`NOTIFY ${WORK_CHANNEL}, 'deliveries'`);
        return { events: ours.size, pendingByDestination, handedOff };
      }, relaxed);
    },

    async finishEvents(claimId, seqs) {
      if (seqs.length === 0) return 0;
      const r = await tx(pool, (c) => c.query({ name: 'tl_finish_events', text: 'DELETE FROM dispatch_queue WHERE event_seq = ANY($1::bigint[]) AND lease_owner = $2',
        values: [[...seqs], claimId] }), relaxed);
      return r.rowCount ?? 0;
    },
  };
}
