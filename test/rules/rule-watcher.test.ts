import { expect } from 'chai';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRuleWatcher, type ReloadEvent, type RuleWatcher } from '../../src/rules/rule-watcher.ts';

interface LogLine { level: 'info' | 'warn' | 'error'; obj: object; msg?: string }

function memoryLogger() {
  const lines: LogLine[] = [];
  const at = (level: LogLine['level']) => (obj: object, msg?: string) => void lines.push({ level, obj, msg });
  return { lines, logger: { info: at('info'), warn: at('warn'), error: at('error') } };
}

/** Polls `cond` every 20 ms; fails after `ms`. Returns the time it took. */
async function waitFor(cond: () => boolean, ms = 2000): Promise<number> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > ms) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return Date.now() - start;
}

const ruleFile = (name: string, id = 'ga4.page') => JSON.stringify({
  destination: 'ga4',
  rules: [{ id, event: '*', output: { name } }],
});

describe('rule watcher (hot reload)', function () {
  this.timeout(10_000);
  let dir: string;
  let watcher: RuleWatcher | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tl-watch-'));
    writeFileSync(join(dir, 'ga4.json'), ruleFile('v1'));
  });
  afterEach(() => {
    watcher?.close();
    watcher = undefined;
    rmSync(dir, { recursive: true, force: true });
  });
  const nameFor = (w: RuleWatcher, scriptId = 'AB12CD34') => w.current().rulesFor(scriptId, 'ga4')[0]?.output.name;

  for (const mode of ['fs.watch', 'poll only'] as const) {
    describe(mode, () => {
      const start = (logger: ReturnType<typeof memoryLogger>['logger']) =>
        startRuleWatcher({ dir, logger, displayBase: dir, watch: mode === 'fs.watch' });

      it('an edit takes effect within 2 s', async () => {
        const { logger } = memoryLogger();
        watcher = start(logger);
        expect(nameFor(watcher)).to.equal('v1');
        writeFileSync(join(dir, 'ga4.json'), ruleFile('v2'));
        await waitFor(() => nameFor(watcher!) === 'v2');
      });

      it('an invalid edit is refused and logged with file and path; a fix is taken', async () => {
        const { lines, logger } = memoryLogger();
        watcher = start(logger);
        writeFileSync(join(dir, 'ga4.json'), JSON.stringify({ destination: 'ga4', rules: [{ id: 'x', event: '*', output: { name: { sumitems: [] } } }] }));
        await waitFor(() => watcher!.errors().length > 0);
        expect(nameFor(watcher)).to.equal('v1');
        expect(watcher.errors()).to.deep.equal([
          { file: 'ga4.json', path: '/rules/0/output/name', message: 'unknown operation "sumitems" (did you mean "sum_items"?)' },
        ]);
        const logged = lines.filter((l) => l.level === 'error');
        expect(logged).to.deep.equal([{
          level: 'error',
          obj: { file: 'ga4.json', path: '/rules/0/output/name' },
          msg: 'rule file invalid: ga4.json: /rules/0/output/name: unknown operation "sumitems" (did you mean "sum_items"?)',
        }]);
        expect(lines.some((l) => l.level === 'warn' && /last good rules keep serving/.test(l.msg ?? ''))).to.equal(true);

        writeFileSync(join(dir, 'ga4.json'), ruleFile('v3'));
        await waitFor(() => nameFor(watcher!) === 'v3');
        expect(watcher.errors()).to.deep.equal([]);
      });

      it('a new account folder and file are picked up', async () => {
        const { logger } = memoryLogger();
        watcher = start(logger);
        mkdirSync(join(dir, 'accounts', 'AB12CD34'), { recursive: true });
        writeFileSync(join(dir, 'accounts', 'AB12CD34', 'ga4.json'), ruleFile('account'));
        await waitFor(() => nameFor(watcher!) === 'account');
        expect(nameFor(watcher, 'OTHER000')).to.equal('v1');
      });
    });
  }

  it('an atomic rename-over save is picked up', async () => {
    watcher = startRuleWatcher({ dir, logger: memoryLogger().logger });
    writeFileSync(join(dir, '.ga4.json.tmp'), ruleFile('renamed'));
    renameSync(join(dir, '.ga4.json.tmp'), join(dir, 'ga4.json'));
    await waitFor(() => nameFor(watcher!) === 'renamed');
  });

  it('onReload reports every attempt; unsubscribing stops it', async () => {
    watcher = startRuleWatcher({ dir, logger: memoryLogger().logger });
    const seen: ReloadEvent[] = [];
    const off = watcher.onReload((e) => seen.push(e));
    writeFileSync(join(dir, 'ga4.json'), '{');
    await waitFor(() => seen.length === 1);
    expect(seen[0].ok).to.equal(false);
    writeFileSync(join(dir, 'ga4.json'), ruleFile('v2'));
    await waitFor(() => seen.length === 2);
    expect(seen[1].ok && seen[1].ruleSet.rulesFor('X', 'ga4')[0].output.name).to.equal('v2');
    off();
    watcher.reload();
    expect(seen).to.have.length(2);
  });

  it('invalid rules at start: no throw, valid() false and an empty set until a reload succeeds, logged loudly', async () => {
    writeFileSync(join(dir, 'ga4.json'), '{"destination": "ga4"}');
    const log = memoryLogger();
    const w = startRuleWatcher({ dir, logger: log.logger, displayBase: dir, debounceMs: 10, pollMs: 20 });
    try {
      expect(w.valid()).to.equal(false);
      expect(w.errors().map((e) => `${e.file}: ${e.message}`)).to.deep.equal(['ga4.json: missing required "rules"']);
      expect(w.current().rulesFor('X', 'ga4')).to.deep.equal([]);
      expect(JSON.stringify(log.lines)).to.contain('RULES INVALID AT START');
      writeFileSync(join(dir, 'ga4.json'), ruleFile('fixed'));
      await waitFor(() => w.valid());
      expect(w.current().rulesFor('X', 'ga4')[0].output.name).to.equal('fixed');
    } finally {
      w.close();
    }
  });
});
