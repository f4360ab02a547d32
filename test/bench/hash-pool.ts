// Benchmark of identifier hashing: inline vs the piscina pool with 1, 10 and 100 users per
// task. Part of `npm run bench`; alone: node --import tsx test/bench/hash-pool.ts [items]
// An "item" is one user hashed for one platform (~9 fields, ~7 of them SHA-256).
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { SPECS } from '../pipeline/plugin-specs.ts';
import { hashBatch, type HashItem } from '../../src/workers/hash-worker.ts';
import { createHashPool } from '../../src/workers/pool.ts';

const FAMILIES = [SPECS.google, SPECS.meta, SPECS.tiktok];

const makeItems = (n: number): HashItem[] => Array.from({ length: n }, (_, i) => ({
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

export interface HashRow { mode: string; items: number; ms: number; fields: number }

async function time(mode: string, run: () => Promise<ReturnType<typeof hashBatch>>): Promise<HashRow> {
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

/** Inline vs the pool at 1, 10 and 100 users per task, and the pool's own split, over `n` items. */
export async function hashingRows(n: number): Promise<HashRow[]> {
  const items = makeItems(n);
  const pool = createHashPool({ threads: availableParallelism(), inlineBelow: 0, itemsPerTask: 100 });
  const rows: HashRow[] = [];
  rows.push(await time('inline (main thread)', async () => hashBatch(items)));
  for (const size of [1, 10, 100]) {
    rows.push(await time(`pool, ${size} user${size === 1 ? '' : 's'}/task`, async () => (await Promise.all(chunks(items, size).map((c) => pool.run('hashBatch', c)))).flat()));
  }
  rows.push(await time('pool.hashBatch (auto split)', () => pool.hashBatch(items)));
  await pool.close();
  return rows;
}

/** The Markdown table `npm run bench` prints. */
export function hashingTable(rows: readonly HashRow[]): string {
  const lines = ['| hashing | µs/user (wall) | µs/field (wall) | users/s |', '|---|---:|---:|---:|'];
  for (const r of rows) {
    lines.push(`| ${r.mode} | ${((r.ms * 1000) / r.items).toFixed(1)} | ${((r.ms * 1000) / r.fields).toFixed(2)} | ${Math.round(r.items / (r.ms / 1000)).toLocaleString('en-US')} |`);
  }
  return lines.join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const n = Number(process.argv[2] ?? 20_000);
  const rows = await hashingRows(n);
  console.log(`node ${process.version}, ${availableParallelism()} threads, ${n} items, ${(rows[0].fields / rows[0].items).toFixed(1)} fields/item\n`);
  console.log(hashingTable(rows));
}
