// SQLite's fan-out cursor (migration 22, docs/fan-out-cursor.md): accepted events are fanned
// out from the events table in seq order, after a cursor, instead of from a dispatch_queue
// row each. One row (part 0) keeps cursor_seq (every accepted event up to it is settled, or
// waits in dispatch_queue as an exception), mapped_to (the highest seq whose fan-out
// committed), claimed_to (the highest seq handed to a claim) and the lease of the claim that
// took it, held while events it handed out are unsettled. Which events are open (claimed,
// not yet settled) lives in the memory of the store object that holds the lease: a claim
// moves claimed_to, each settling transaction moves cursor_seq. Another holder (the lease
// lapsed, or was handed back for a process that died) takes the open range over into
// dispatch_queue: the events being mapped when the holder died (mapped_to, claimed_to] with
// one interruption counted (src/delivery/poison.ts), the others to be fanned out again (their
// `stored` keeps what was delivered from being sent twice). The cursor never moves back.
import type Database from 'better-sqlite3';
import type { SeqEventRow } from '../event-rows.ts';
import { ownerOf } from '../claim-owner.ts';

interface CursorRow {
  cursor_seq: number;
  mapped_to: number;
  claimed_to: number;
  lease_owner: string | null;
  lease_until: number | null;
}

/** An event the cursor handed to a claim of this store object, not settled yet. */
interface OpenEvent {
  claimId: string;
  /** Its fan-out committed: it waits for its handed-off deliveries' rows (finishEvents). */
  mapped: boolean;
  /** Its claim's lease end: mapped and still waiting then, it is fanned out again. */
  until: number;
}

/** The cursor as the store object holding its lease knows it (the row's values while the lease is ours). */
interface Holding {
  owner: string;
  /** The claim written as the lease holder, and its lease end. */
  claimId: string;
  leaseUntil: number;
  leaseMs: number;
  cursor: number;
  mapped: number;
  claimed: number;
  /** By seq, ascending: events are claimed in seq order, and one claimed again keeps its place. */
  open: Map<number, OpenEvent>;
  /** Open events whose fan-out has not committed (a batch whose completion failed). */
  unmapped: number;
  /** No mapped open event's lease ends before this. */
  overdueAt: number;
  /** The row's lease or range is not what it was: written by the claim's transaction even when it takes nothing. */
  dirty: boolean;
}

export type FanOutCursor = ReturnType<typeof sqliteFanOutCursor>;

export function sqliteFanOutCursor(db: Database.Database) {
  const q = {
    row: db.prepare<[], CursorRow>('SELECT cursor_seq, mapped_to, claimed_to, lease_owner, lease_until FROM fanout_cursors WHERE part = 0'),
    // The open range of a holder that is gone, into the queue: the events it was mapping counted as interrupted.
    takeOver: db.prepare(`INSERT INTO dispatch_queue (event_seq, map_claims)
      SELECT seq, seq > @mapped FROM events WHERE seq > @from AND seq <= @to AND status = 'accepted' ON CONFLICT (event_seq) DO NOTHING`),
    save: db.prepare('UPDATE fanout_cursors SET cursor_seq = ?, mapped_to = ?, claimed_to = ?, lease_owner = ?, lease_until = ? WHERE part = 0'),
    // Accepted events after `seq` (those queued as exceptions are the queue's): from, limit.
    fresh: db.prepare<[number, number], SeqEventRow>(`SELECT e.* FROM events e WHERE e.seq > ? AND e.status = 'accepted'
      AND NOT EXISTS (SELECT 1 FROM dispatch_queue q WHERE q.event_seq = e.seq) ORDER BY e.seq LIMIT ?`),
    anyFresh: db.prepare<[number], { x: number }>(`SELECT 1 AS x FROM events e WHERE e.seq > ? AND e.status = 'accepted'
      AND NOT EXISTS (SELECT 1 FROM dispatch_queue q WHERE q.event_seq = e.seq) LIMIT 1`),
    lastSeq: db.prepare<[], { seq: number | null }>('SELECT max(seq) AS seq FROM events'),
    event: db.prepare<[number], SeqEventRow>('SELECT * FROM events WHERE seq = ?'),
    lapse: db.prepare('UPDATE fanout_cursors SET lease_owner = NULL, lease_until = NULL WHERE lease_until <= ?'),
  };
  let holding: Holding | null = null;
  /** Every event up to this seq is stored, and none of them is an accepted one after the cursor that no queue row holds. */
  let scannedTo = 0;

  /** The row, and what this object holds of it: nothing once the row's lease is another claim's (or none). */
  function read(): { row: CursorRow; h: Holding | null } {
    const row = q.row.get()!;
    if (holding !== null && (row.lease_owner === null || ownerOf(row.lease_owner) !== holding.owner)) holding = null;
    return { row, h: holding };
  }

  /** Moves a gone holder's open range into the queue (the cursor then goes past it); false when it has none. */
  function takeOver(row: CursorRow): boolean {
    if (row.claimed_to === row.cursor_seq) return false;
    q.takeOver.run({ from: row.cursor_seq, mapped: row.mapped_to, to: row.claimed_to });
    return true;
  }

  /**
   * Persists the holding: cursor_seq before the lowest open event (claimed_to when none is), and
   * the lease, renewed to `leaseUntil`; with nothing open the lease is handed back.
   */
  function save(h: Holding, leaseUntil = h.leaseUntil): void {
    const first = h.open.keys().next();
    h.cursor = first.done ? h.claimed : first.value - 1;
    if (first.done) {
      holding = null;
      q.save.run(h.cursor, h.mapped, h.claimed, null, null);
      return;
    }
    h.leaseUntil = leaseUntil;
    q.save.run(h.cursor, h.mapped, h.claimed, h.claimId, leaseUntil);
  }

  function settle(h: Holding, seq: number, e: OpenEvent): void {
    h.open.delete(seq);
    if (!e.mapped) h.unmapped--;
  }

  /** Open events to claim again, oldest first: not mapped (their batch's completion failed), or mapped and past their lease. */
  function again(h: Holding, now: number, limit: number): number[] {
    if (h.unmapped === 0 && now < h.overdueAt) return [];
    const out: number[] = [];
    h.overdueAt = Infinity;
    for (const [seq, e] of h.open) {
      if (!e.mapped || e.until <= now) {
        if (out.length < limit) out.push(seq);
        else if (e.mapped) h.overdueAt = Math.min(h.overdueAt, e.until); // left for the next claim
      } else if (e.until < h.overdueAt) h.overdueAt = e.until;
    }
    return out;
  }

  /** Whether `claimId` may claim from the cursor at `now`: ours, free, or lapsed. */
  const available = (row: CursorRow, h: Holding | null, owner: string, now: number): boolean =>
    h !== null ? h.owner === owner || row.lease_until! <= now
      : row.lease_owner === null || ownerOf(row.lease_owner) === owner || row.lease_until! <= now;

  return {
    /** Whether a claim by `claimId` has cursor work to do (a read: an idle fan-out looks without a write transaction). */
    hasWork(claimId: string, now: number, leaseMs: number): boolean {
      const { row, h } = read();
      if (!available(row, h, ownerOf(claimId), now)) return false;
      if (h !== null && h.owner === ownerOf(claimId)) {
        // Open events keep the lease: renewed before half of it is gone.
        if (h.unmapped > 0 || now >= h.overdueAt || h.leaseUntil - now < leaseMs / 2) return true;
      } else if (row.claimed_to > row.cursor_seq) return true; // a gone holder's open range
      // The last seq is read first: an event committed after it has a higher one, never skipped.
      const last = q.lastSeq.get()?.seq ?? 0;
      if (q.anyFresh.get(Math.max(row.claimed_to, scannedTo)) !== undefined) return true;
      scannedTo = Math.max(scannedTo, last);
      return false;
    },

    /**
     * In a claim's transaction: the events the cursor offers `claimId`, oldest first (its open
     * events to claim again, then fresh ones after claimed_to), or null when another claim
     * holds its lease. Takes the cursor over first when it is free, lapsed, or ours with no
     * memory of it here (a restarted process with the same owner).
     */
    offer(claimId: string, now: number, leaseMs: number, limit: number): SeqEventRow[] | null {
      const owner = ownerOf(claimId);
      const { row } = read();
      let h = holding;
      if (!available(row, h, owner, now)) return null;
      if (h === null || h.owner !== owner) {
        // A lease set means open events (it is handed back with the last): a range to take over.
        const last = row.claimed_to;
        h = holding = {
          owner, claimId, leaseUntil: now + leaseMs, leaseMs, cursor: last, mapped: last, claimed: last,
          open: new Map(), unmapped: 0, overdueAt: Infinity, dirty: takeOver(row),
        };
      }
      h.leaseMs = leaseMs;
      const rows = again(h, now, limit).map((seq) => q.event.get(seq)!);
      if (rows.length < limit) rows.push(...q.fresh.all(Math.max(h.claimed, scannedTo), limit - rows.length));
      return rows;
    },

    /** In the claim's transaction, after offer(): `claimId` took these of the offered events; renews the lease. */
    claimed(claimId: string, now: number, seqs: readonly number[]): void {
      const h = holding;
      if (h === null) return;
      const until = now + h.leaseMs;
      for (const seq of seqs) {
        const e = h.open.get(seq);
        if (e === undefined) {
          h.open.set(seq, { claimId, mapped: false, until });
          h.unmapped++;
          h.claimed = seq;
          continue;
        }
        if (e.mapped) h.unmapped++;
        e.claimId = claimId;
        e.mapped = false;
        e.until = until;
      }
      if (seqs.length === 0 && !h.dirty && h.open.size === 0) {
        holding = null; // took over a free cursor, and nothing from it: the row stays as it is
        return;
      }
      h.claimId = claimId;
      h.dirty = false;
      save(h, until);
    },

    /** In the claim's transaction: a queue row was claimed for an event also open here (replay queued it again): the queue has it now. */
    queued(seq: number): void {
      const e = holding?.open.get(seq);
      if (e === undefined) return;
      settle(holding!, seq, e);
      holding!.dirty = true;
    },

    /** The open event `seq` as `claimId` holds it, while the cursor's lease is still this object's (fencing); undefined otherwise. */
    holds(claimId: string): ((seq: number) => OpenEvent | undefined) | null {
      const { h } = read();
      if (h === null || h.owner !== ownerOf(claimId)) return null;
      return (seq) => {
        const e = h.open.get(seq);
        return e !== undefined && e.claimId === claimId ? e : undefined;
      };
    },

    /**
     * In a completion's transaction: these events of `claimId` were committed; each settled
     * (left: no handoffs, or held) or mapped (waiting for its handoffs). Persists the cursor
     * with mapped_to past them and the lease renewed.
     */
    completed(now: number, settled: readonly number[], mapped: readonly number[]): void {
      const h = holding!;
      let top = h.mapped;
      for (const seq of settled) {
        settle(h, seq, h.open.get(seq)!);
        if (seq > top) top = seq;
      }
      for (const seq of mapped) {
        const e = h.open.get(seq)!;
        e.mapped = true;
        h.unmapped--;
        if (e.until < h.overdueAt) h.overdueAt = e.until;
        if (seq > top) top = seq;
      }
      h.mapped = top;
      save(h, now + h.leaseMs);
    },

    /** In finishEvents' transaction: these mapped events have every handed-off row now. */
    finished(seqs: readonly number[]): void {
      const h = holding!;
      for (const seq of seqs) settle(h, seq, h.open.get(seq)!);
      save(h);
    },

    /**
     * Hands back the cursor's lease if a claim of `owner` holds it: its open range goes to the
     * queue (what it was mapping counted as interrupted). Returns 1 if it did (one lease), else 0.
     */
    release(owner: string): number {
      const { row } = read();
      if (holding?.owner === owner) holding = null;
      if (row.lease_owner === null || ownerOf(row.lease_owner) !== owner) return 0;
      takeOver(row);
      q.save.run(row.claimed_to, row.claimed_to, row.claimed_to, null, null);
      return 1;
    },

    /** A transaction that read or moved the cursor failed: what this object held of it is dropped, the row is the truth. */
    forget(): void {
      holding = null;
    },

    /** The claim holding the cursor's lease, if any. */
    holder(): string | null {
      return q.row.get()!.lease_owner;
    },

    /** Clears a lapsed lease (its open range is taken over by the next claim). */
    lapse(now: number): number {
      return q.lapse.run(now).changes;
    },
  };
}
