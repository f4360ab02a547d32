// Benchmark of identifier hashing: inline vs the piscina pool with 1 and ~100 items per task.
// Run: node --import tsx test/bench/hash-pool.ts [items]
// An "item" is one user hashed for one platform (~9 fields, ~7 of them SHA-256).
import { availableParallelism } from 'node:os';
import { SPECS } from '../pipeline/plugin-specs.ts';
import { hashBatch, type HashItem } from '../../src/workers/hash-worker.ts';
import { createHashPool } from '../../src/workers/pool.ts';

const N = Number(process.argv[2] ?? 20_000);
const FAMILIES = [SPECS.google, SPECS.meta, SPECS.tiktok];

const items: HashItem[] = Array.from({ length: N }, (_, i) => ({
  spec: FAMILIES[i % 3],
  defaultCountry: 'RO',
  user: {
    id: `C-${i}`,
    email: `Customer.${i}@GMail.com`,
    phone: `0722 ${String(100000 + (i % 900000)).slice(0, 3)} ${String(i % 1000).padStart(3, '0')}`,
    first_name: 'Ștefan',
    last_name: 'Großmann',
    city: 'Cluj-Napoca',
    region: 'Cluj',
    postal_code: '400001',
    country: 'Romania',
  },
}));

interface Row { mode: string; items: number; ms: number; fields: number }

async function time(mode: string, run: () => Promise<ReturnType<typeof hashBatch>>): Promise<Row> {
  await run(); // warm-up: JIT, worker start-up, lazy country index
  const t0 = performance.now();
  const out = await run();
  const ms = performance.now() - t0;
  return { mode, items: out.length, ms, fields: out.reduce((n, r) => n + Object.keys(r.fields).length, 0) };
}

function chunks<T>(list: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

const threads = availableParallelism();
const pool = createHashPool({ threads, inlineBelow: 0, itemsPerTask: 100 });
const rows: Row[] = [];
rows.push(await time('inline (main thread)', async () => hashBatch(items)));
rows.push(await time('pool, 1 item/task', async () => (await Promise.all(items.map((item) => pool.run('hashBatch', [item])))).flat()));
rows.push(await time('pool, 100 items/task', async () => (await Promise.all(chunks(items, 100).map((c) => pool.run('hashBatch', c)))).flat()));
rows.push(await time('pool.hashBatch (auto split)', () => pool.hashBatch(items)));
await pool.close();

console.log(`node ${process.version}, ${threads} threads, ${N} items, ${(rows[0].fields / rows[0].items).toFixed(1)} fields/item\n`);
console.log('| mode | µs/item (wall) | µs/field (wall) | items/s |');
console.log('|---|---:|---:|---:|');
for (const r of rows) {
  const us = (r.ms * 1000) / r.items;
  console.log(`| ${r.mode} | ${us.toFixed(1)} | ${((r.ms * 1000) / r.fields).toFixed(2)} | ${Math.round(r.items / (r.ms / 1000)).toLocaleString('en-US')} |`);
}
