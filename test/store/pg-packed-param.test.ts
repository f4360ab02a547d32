// PostgreSQL intake sends each event's packed payload (payload-codec.ts) as it is, in one
// binary bytea[] parameter (bytea-array.ts) beside the rows' JSON document, instead of as
// base64 text in the document for SQL to decode. What the events table then holds is byte for
// byte what packPayload made, row by row in a batch mixing packed and text payloads (short
// ones stay text), non-ASCII text included.
import { expect } from 'chai';
import pg from 'pg';
import type { EventRecord } from '../../src/store/types.ts';
import { packPayload, PACK_MIN_CHARS } from '../../src/store/payload-codec.ts';
import { byteaArrayParam } from '../../src/store/postgres/bytea-array.ts';
import { countStatements } from '../helpers/handed-off.ts';
import { usePgStore } from '../helpers/pg-store-fixture.ts';
import { FULL_CHECKOUT_COMPLETED } from '../schema/payloads.ts';

const T0 = 1_800_000_000_000;
const ACCOUNT = 'ACCT0001';

const row = (id: string, payload: unknown): EventRecord => ({
  id, scriptId: ACCOUNT, name: 'checkout_completed', eventId: `O-${id}`, status: 'accepted', source: 'event', requestId: `req-${id}`,
  receivedAt: T0, errors: [], warnings: [], payload,
});

/** Packed, text below the threshold, packed non-ASCII, text non-ASCII, an empty object, null: in one batch, in this order. */
const PAYLOADS: Record<string, unknown> = {
  big: FULL_CHECKOUT_COMPLETED,
  short: { a: 'b' },
  accents: { ...FULL_CHECKOUT_COMPLETED, user: { first_name: 'Ștefan', last_name: 'Größ 🛒', city: 'Zürich – 東京', note: 'a "q"\n\\ \u0000 \u2028' } },
  shortAccents: { n: 'é🛒' },
  empty: {},
  none: null,
};

describe('PostgreSQL intake: packed payloads travel as one binary bytea[] parameter', function () {
  this.timeout(30_000);
  const t = usePgStore();

  it('byteaArrayParam: PostgreSQL reads back every element as given, NULLs and an empty array included', async () => {
    const items = [Buffer.from([0, 1, 2, 255]), null, Buffer.alloc(0), Buffer.from('Größ 🛒'), new Uint8Array([9])];
    const { rows: [r] } = await t.raw.query<{ a: (Buffer | null)[]; n: number }>('SELECT $1::bytea[] AS a, cardinality($1::bytea[]) AS n', [byteaArrayParam(items)]);
    expect(r.n).to.equal(5);
    expect(r.a.map((b) => (b === null ? null : [...b]))).to.deep.equal(items.map((b) => (b === null ? null : [...b])));
    const { rows: [e] } = await t.raw.query<{ n: number }>('SELECT cardinality($1::bytea[]) AS n', [byteaArrayParam([])]);
    expect(e.n).to.equal(0);
    const { rows: [all] } = await t.raw.query<{ a: Buffer[] }>('SELECT $1::bytea[] AS a', [byteaArrayParam([Buffer.from('x'), Buffer.from('y')])]);
    expect(all.a.map(String)).to.deep.equal(['x', 'y']);
  });

  it('every row of a mixed batch stores exactly what packPayload made, and reads back as it was', async () => {
    const sent: unknown[][] = [];
    const query = pg.Client.prototype.query;
    // Watch what intake's statement sends (the store's connections are pg.Clients).
    pg.Client.prototype.query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
      if (typeof config === 'object' && config !== null && (config as { name?: string }).name === 'tl_append') sent.push((config as { values: unknown[] }).values);
      return (query as (...a: unknown[]) => unknown).call(this, config, ...rest);
    } as typeof query;
    try {
      await t.store.events.append(Object.entries(PAYLOADS).map(([id, p]) => row(id, p)));
    } finally {
      pg.Client.prototype.query = query;
    }
    const expected = Object.entries(PAYLOADS).map(([id, p]) => ({ id, ...packPayload(JSON.stringify(p)) }));
    expect(expected.map((e) => e.packed !== null), 'the batch mixes both forms').to.deep.equal([true, false, true, false, false, false]);
    expect(JSON.stringify(PAYLOADS.shortAccents).length).to.be.below(PACK_MIN_CHARS);

    expect(sent).to.have.length(1);
    const [doc, , packed] = sent[0];
    expect(doc as string, 'no payload bytes in the JSON document').to.not.contain('packed');
    expect(packed, 'one Buffer, sent as binary').to.be.instanceOf(Buffer);
    expect((packed as Buffer).equals(byteaArrayParam(expected.map((e) => e.packed)))).to.equal(true);

    const { rows } = await t.raw.query<{ id: string; payload: string; payload_packed: Buffer | null }>('SELECT id, payload, payload_packed FROM events ORDER BY seq');
    expect(rows.map((r) => r.id)).to.deep.equal(Object.keys(PAYLOADS));
    rows.forEach((r, i) => {
      expect(r.payload, r.id).to.equal(expected[i].payload);
      if (expected[i].packed === null) expect(r.payload_packed, r.id).to.equal(null);
      else expect(r.payload_packed!.equals(expected[i].packed!), `${r.id}: the same bytes`).to.equal(true);
    });
    const listed = await t.store.events.list({ scriptId: ACCOUNT, limit: 10 });
    expect(Object.fromEntries(listed.map((e) => [e.id, e.payload]))).to.deep.equal(PAYLOADS);
  });

  it('an intake commit is one statement between BEGIN and COMMIT: dedup claims, rows, products', async () => {
    const batch = [row('d1', PAYLOADS.big), row('d2', PAYLOADS.big), { ...row('d3', PAYLOADS.big), eventId: 'O-d1' }, { ...row('d4', null), status: 'rejected' as const }];
    let statuses: unknown;
    expect(await countStatements(t.store, async () => (statuses = await t.store.events.append(batch)))).to.equal(3);
    expect(statuses).to.deep.equal(['accepted', 'accepted', 'duplicate', 'rejected']);
    expect(await t.store.events.append([{ ...row('d5', null), eventId: 'O-d2' }]), 'against the batch before').to.deep.equal(['duplicate']);
  });
});
