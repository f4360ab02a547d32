// rule-file-watch.ts on its own: what makes it call back (a change fs.watch reports, a
// fingerprint the poll finds other than the one last loaded) and that close() stops both.
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { watchRuleFiles } from '../../src/rules/rule-file-watch.ts';
import { fingerprintOf } from '../../src/rules/rule-files.ts';
import { waitFor } from '../helpers/test-server.ts';

describe('rule file watch', function () {
  this.timeout(10_000);
  let dir: string;
  let close = (): void => undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tl-file-watch-'));
    writeFileSync(join(dir, 'ga4.json'), '{}');
  });
  afterEach(() => {
    close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const watch of [true, false]) {
    it(`calls back once the files differ from what was loaded (${watch ? 'fs.watch' : 'the poll alone'}), and not after close()`, async () => {
      let loaded = fingerprintOf(dir);
      let calls = 0;
      const w = watchRuleFiles(dir, { watch, pollMs: 50, debounceMs: 10, pluginsDir: [] }, () => loaded, () => {
        calls += 1;
        loaded = fingerprintOf(dir);
      });
      close = () => w.close();
      writeFileSync(join(dir, 'ga4.json'), '{"changed": true}');
      expect(await waitFor(() => calls >= 1, 5000)).to.equal(true);
      w.close();
      const after = calls;
      writeFileSync(join(dir, 'ga4.json'), '{"changed": "again"}');
      await new Promise((r) => setTimeout(r, 300));
      expect(calls).to.equal(after);
    });
  }

  it('the poll leaves files alone that match what was loaded', async () => {
    let calls = 0;
    const w = watchRuleFiles(dir, { watch: false, pollMs: 20 }, () => fingerprintOf(dir), () => (calls += 1));
    close = () => w.close();
    await new Promise((r) => setTimeout(r, 200));
    expect(calls).to.equal(0);
  });
});
