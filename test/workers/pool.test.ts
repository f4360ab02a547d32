import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { threadId } from 'node:worker_threads';
import { expect } from 'chai';
import { SPECS } from '../pipeline/plugin-specs.ts';
import { hashBatch, type HashItem } from '../../src/workers/hash-worker.ts';
import { createHashPool, POOL_RETRY_MS, serverPoolThreads, type HashPool } from '../../src/workers/pool.ts';
import { WORKER_YOUNG_GENERATION_MB, workerFlags } from '../../src/workers/worker-options.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const execFileAsync = promisify(execFile);
const sha256Hex = (s: string) => createHash('sha256').update(s).digest('hex');

const FAMILIES = [SPECS.google, SPECS.meta, SPECS.tiktok];

function sampleBatch(n: number): HashItem[] {
  return Array.from({ length: n }, (_, i) => ({
    spec: FAMILIES[i % 3],
    defaultCountry: i % 2 === 0 ? 'RO' : 'US',
    user: {
      id: `C-${i}`,
      email: ` User.${i}@GMail.com `,
      phone: i % 2 === 0 ? `0722 123 ${String(i % 1000).padStart(3, '0')}` : `(415) 555-${String(i % 10000).padStart(4, '0')}`,
      first_name: i % 4 === 0 ? 'Ștefan' : 'José',
      last_name: 'Großmann',
      city: 'Cluj-Napoca',
      region: i % 2 === 0 ? 'Cluj' : 'California',
      postal_code: i % 2 === 0 ? '400001' : '94103-1234',
      country: i % 2 === 0 ? 'Romania' : 'United States',
      // Not cloneable: must not reach the thread boundary.
      properties: { callback: () => i },
    } as HashItem['user'],
  }));
}

describe('hash pool', () => {
  let pool: HashPool;

  before(() => {
    pool = createHashPool({ threads: 2, inlineBelow: 0, itemsPerTask: 40 });
  });

  after(async () => {
    await pool.close();
  });

  it('loads the .ts worker and runs handlers off the main thread', async () => {
    const info = await pool.run('threadInfo', undefined);
    expect(info.isMainThread).to.equal(false);
    expect(info.threadId).to.not.equal(threadId);
    expect(info.resourceLimits.maxYoungGenerationSizeMb).to.equal(WORKER_YOUNG_GENERATION_MB);
  });

  it('starts its threads in a process run with V8 flags (as `npm start` is)', async () => {
    // Worker refuses V8 flags in execArgv; inherited as they were, no pool thread started.
    const script = `
      const { createHashPool } = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'src/workers/pool.ts')).href)});
      const pool = createHashPool({ threads: 1, inlineBelow: 0 });
      const out = await pool.hashBatch([{ user: { email: 'A@b.com' }, spec: ${JSON.stringify(SPECS.meta)} }]);
      const info = await pool.run('threadInfo', undefined);
      await pool.close();
      console.log(JSON.stringify({ em: out[0].fields['user_data.em'], main: info.isMainThread }));`;
    const dir = mkdtempSync(join(tmpdir(), 'tl-pool-flags-'));
    try {
      writeFileSync(join(dir, 'run.mjs'), script);
      const { stdout } = await execFileAsync(process.execPath,
        ['--max-semi-space-size=4', '--max-old-space-size=512', '--expose-gc', '--import', 'tsx', join(dir, 'run.mjs')], { cwd: ROOT });
      expect(JSON.parse(stdout)).to.deep.equal({ em: sha256Hex('a@b.com'), main: false });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('spreads concurrent tasks over at most `threads` workers', async () => {
    const infos = await Promise.all(Array.from({ length: 20 }, () => pool.run('threadInfo', undefined)));
    const ids = new Set(infos.map((i) => i.threadId));
    expect(ids.size).to.be.within(1, 2);
    expect(ids.has(threadId)).to.equal(false);
  });

  it('gives exactly the inline results, in order, for a batch split over several tasks', async () => {
    const items = sampleBatch(250);
    const pooled = await pool.hashBatch(items);
    expect(pooled).to.have.length(250);
    expect(pooled).to.deep.equal(hashBatch(items));
    expect(pooled[1].fields['user_data.ph']).to.be.a('string');
  });

  it('runs small batches inline with the same results', async () => {
    const inlinePool = createHashPool({ threads: 1, inlineBelow: 1000 });
    try {
      const items = sampleBatch(30);
      expect(await inlinePool.hashBatch(items)).to.deep.equal(await pool.hashBatch(items));
      expect(await inlinePool.hashBatch([])).to.deep.equal([]);
    } finally {
      await inlinePool.close();
    }
  });

  it('hashes inline when its threads cannot start, reports it, and tries the pool again after a pause', async () => {
    // A flag Worker refuses: no thread of this pool can start.
    let clock = 1_000;
    const errors: { err: unknown; retryInMs: number }[] = [];
    const broken = createHashPool({ threads: 1, inlineBelow: 0, execArgv: ['--expose-gc'], now: () => clock,
      onPoolError: (err, retryInMs) => errors.push({ err, retryInMs }) });
    try {
      const items = sampleBatch(10);
      expect(await broken.hashBatch(items)).to.deep.equal(hashBatch(items));
      expect(errors).to.have.length(1);
      expect(String(errors[0].err)).to.match(/execArgv/);
      expect(errors[0].retryInMs).to.equal(POOL_RETRY_MS);
      // Resting: inline, no new attempt.
      clock += POOL_RETRY_MS - 1;
      expect(await broken.hashBatch(items)).to.deep.equal(hashBatch(items));
      expect(errors).to.have.length(1);
      // The pause over: the pool is tried again (and fails again here).
      clock += 1;
      expect(await broken.hashBatch(items)).to.deep.equal(hashBatch(items));
      expect(errors).to.have.length(2);
    } finally {
      await broken.close();
    }
  });

  it('asks offloadWhen for each batch the pool would take, and hashes inline while it says no', async () => {
    // Threads that cannot start make every pool attempt visible (one onPoolError each).
    let offload = false;
    let asked = 0;
    const errors: unknown[] = [];
    const gated = createHashPool({ threads: 1, inlineBelow: 5, execArgv: ['--expose-gc'], onPoolError: (err) => errors.push(err),
      offloadWhen: () => { asked++; return offload; } });
    try {
      const items = sampleBatch(10);
      expect(await gated.hashBatch(items)).to.deep.equal(hashBatch(items));
      expect(await gated.hashBatch(sampleBatch(3))).to.deep.equal(hashBatch(sampleBatch(3))); // under inlineBelow: not asked
      expect([asked, errors.length]).to.deep.equal([1, 0]);
      offload = true;
      expect(await gated.hashBatch(items)).to.deep.equal(hashBatch(items));
      expect([asked, errors.length]).to.deep.equal([2, 1]); // the pool was tried
    } finally {
      await gated.close();
    }
  });

  it('close() waits, is idempotent, and refuses later work', async () => {
    const p = createHashPool({ threads: 1, inlineBelow: 0 });
    const pending = p.hashBatch(sampleBatch(5));
    const closed = p.close();
    expect(await pending).to.have.length(5);
    await closed;
    await p.close();
    let error: unknown;
    try {
      await p.hashBatch(sampleBatch(1));
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(Error);
    expect((error as Error).message).to.equal('hash pool is closed');
  });
});

describe('worker flags', () => {
  it('keeps the loader, warning, source-map and profiling flags and drops V8 and per-process ones', () => {
    expect(workerFlags(['--max-semi-space-size=4', '--import', 'tsx', '--max_old_space_size=64', '-r', './a.cjs', '--stack-size=2000',
      '--enable-source-maps', '--expose-gc', '--cpu-prof', '--cpu-prof-dir=/tmp/p', '--title=tl', '--import=./b.mjs', '--no-warnings',
      '--conditions', 'dev', '--experimental-vm-modules'])).to.deep.equal(['--import', 'tsx', '-r', './a.cjs', '--enable-source-maps', '--cpu-prof',
      '--cpu-prof-dir=/tmp/p', '--import=./b.mjs', '--no-warnings', '--conditions', 'dev', '--experimental-vm-modules']);
  });
});


describe('workers: the server\'s two hash pools', () => {
  it('share WORKERS between them (the delivery thread\'s the larger half), each at least one thread', () => {
    expect([1, 2, 3, 4, 5, 8].map((w) => serverPoolThreads(w))).to.deep.equal([
      { http: 1, delivery: 1 }, { http: 1, delivery: 1 }, { http: 1, delivery: 2 },
      { http: 2, delivery: 2 }, { http: 2, delivery: 3 }, { http: 4, delivery: 4 },
    ]);
  });
});
