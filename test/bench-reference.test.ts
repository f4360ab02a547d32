// The benches' reference build (test/bench/reference.ts), without running a bench: the
// arguments, the ABAB order, the ratio table, and the checkout of a commit beside this tree
// (a git worktree with this tree's node_modules when the lock files match, npm ci otherwise),
// removed again by close().
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { alternation, benchOptions, comparisonTable, CURRENT_ROOT, prepareReference, ratios, serverArgsOf } from './bench/reference.ts';

const git = (...args: string[]) => execFileSync('git', args, { cwd: CURRENT_ROOT, encoding: 'utf8' }).trim();

describe('bench reference build', function () {
  this.timeout(60_000);

  it('reads --ref X, --ref=X or BENCH_REF (the argument wins), --json, BENCH_REF_PAIRS; refuses what it cannot use', () => {
    expect(benchOptions([], {})).to.deep.equal({ ref: null, json: null, pairs: 2 });
    expect(benchOptions(['--ref', '14dc393'], {})).to.deep.equal({ ref: '14dc393', json: null, pairs: 2 });
    expect(benchOptions(['--ref=main', '--json', 'f.json'], { BENCH_REF_PAIRS: '3' })).to.deep.equal({ ref: 'main', json: 'f.json', pairs: 3 });
    expect(benchOptions([], { BENCH_REF: ' 14dc393 ' }).ref).to.equal('14dc393');
    expect(benchOptions(['--ref', 'abc'], { BENCH_REF: 'def' }).ref).to.equal('abc');
    expect(() => benchOptions(['--ref'], {})).to.throw('--ref needs a value');
    expect(() => benchOptions(['--ref', '--json', 'x'], {})).to.throw('--ref needs a value');
    expect(() => benchOptions(['--refs', 'x'], {})).to.throw('unknown argument --refs');
    expect(() => benchOptions([], { BENCH_REF_PAIRS: '0' })).to.throw('BENCH_REF_PAIRS');
  });

  it('runs each figure current, reference, current, reference …', () => {
    expect(alternation(2)).to.deep.equal([
      { pair: 0, side: 'current' }, { pair: 0, side: 'reference' }, { pair: 1, side: 'current' }, { pair: 1, side: 'reference' },
    ]);
    expect(alternation(1).map((r) => r.side)).to.deep.equal(['current', 'reference']);
  });

  it('prints each figure\'s medians, its ratio to the reference (median of the pairs\' ratios, and each) and each side\'s ratio to bare Koa', () => {
    const row = { figure: 'end to end: CPU per event', unit: 'µs', current: [600, 500, 550], reference: [1000, 1000, 500], bareCurrent: [60, 50, 55], bareReference: [50, 50, 50] };
    const rate = { figure: 'endpoint 1: rate', unit: 'req/s', current: [900], reference: [1000], bareCurrent: [10_000], bareReference: [12_500] };
    expect(ratios(row)).to.deep.equal({ each: [0.6, 0.5, 1.1], median: 0.6 });
    expect(comparisonTable([row, rate, { figure: 'N=1: intake', unit: 'events/s', current: [60, 70], reference: [50, 50] }], { current: 'abc1234', reference: '14dc393' }).split('\n')).to.deep.equal([
      '| figure | current (abc1234) | reference (14dc393) | ÷ reference (median; each pair) | current ÷ bare Koa | reference ÷ bare Koa |',
      '|---|---:|---:|---|---:|---:|',
      '| end to end: CPU per event (µs) | 550 | 1000 | **0.60** (0.60, 0.50, 1.10) | 10.0× | 20.0× |',
      '| endpoint 1: rate (req/s) | 900 | 1000 | **0.90** (0.90) | 0.09× | 0.08× |',
      '| N=1: intake (events/s) | 65.0 | 50.0 | **1.30** (1.20, 1.40) | n/a | n/a |',
    ]);
  });

  it('checks a commit out beside this tree with its node_modules when the lock files match, and removes it on close', () => {
    const installs: string[] = [];
    const ref = prepareReference('HEAD', { build: false, install: (dir) => installs.push(dir), log: () => undefined });
    try {
      expect(ref.commit).to.equal(git('rev-parse', 'HEAD'));
      expect(git('worktree', 'list', '--porcelain')).to.include(`worktree ${ref.root}`);
      expect(readFileSync(join(ref.root, 'package.json'), 'utf8')).to.equal(git('show', 'HEAD:package.json') + '\n');
      expect(ref.nodeModules).to.equal('linked');
      expect(lstatSync(join(ref.root, 'node_modules')).isSymbolicLink()).to.equal(true);
      expect(realpathSync(join(ref.root, 'node_modules'))).to.equal(realpathSync(join(CURRENT_ROOT, 'node_modules')));
      expect(installs).to.deep.equal([]);
      expect(ref.serverArgs).to.deep.equal(serverArgsOf(CURRENT_ROOT));
      expect(ref.built).to.equal(false);
    } finally {
      ref.close();
    }
    expect(existsSync(ref.root)).to.equal(false);
    expect(git('worktree', 'list', '--porcelain')).to.not.include(ref.root);
  });

  it('installs with npm ci when the reference\'s package-lock.json differs, and refuses what is not a commit', () => {
    // A commit whose lock file differs: this tree's HEAD with one more line in it (a commit object only, no branch).
    const lock = readFileSync(join(CURRENT_ROOT, 'package-lock.json'), 'utf8');
    const tmpIndex = join(mkdtempSync(join(tmpdir(), 'tl-bench-index-')), 'index');
    const blob = execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: CURRENT_ROOT, input: `${lock}\n`, encoding: 'utf8' }).trim();
    const env = { ...process.env, GIT_INDEX_FILE: tmpIndex };
    execFileSync('git', ['read-tree', 'HEAD'], { cwd: CURRENT_ROOT, env });
    execFileSync('git', ['update-index', '--cacheinfo', `100644,${blob},package-lock.json`], { cwd: CURRENT_ROOT, env });
    const tree = execFileSync('git', ['write-tree'], { cwd: CURRENT_ROOT, env, encoding: 'utf8' }).trim();
    rmSync(join(tmpIndex, '..'), { recursive: true, force: true });
    const commit = execFileSync('git', ['commit-tree', tree, '-p', 'HEAD', '-m', 'bench test: a changed lock file'], { cwd: CURRENT_ROOT, encoding: 'utf8' }).trim();
    const installs: string[] = [];
    const ref = prepareReference(commit, { build: false, install: (dir) => {
      installs.push(dir);
      writeFileSync(join(dir, 'installed'), '');
    }, log: () => undefined });
    try {
      expect(ref.nodeModules).to.equal('installed');
      expect(installs).to.deep.equal([ref.root]);
    } finally {
      ref.close();
    }
    expect(existsSync(ref.root)).to.equal(false);
    expect(() => prepareReference('no-such-ref-anywhere', { build: false })).to.throw('--ref no-such-ref-anywhere: not a commit');
  });
});
