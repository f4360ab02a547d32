// The server runs with the same node flags however it is started: `npm start` and the
// `tracklane` executable (`tracklane serve`) pass the same V8 heap and GC flags.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('process: node flags', () => {
  it('the tracklane executable passes exactly the node flags of npm start', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string }; bin: { tracklane: string } };
    const start = pkg.scripts.start.split(/\s+/);
    // exec: the shell npm runs the script in becomes the server, so npm's signals reach it.
    expect(start.slice(0, 2)).to.deep.equal(['exec', 'node']);
    expect(start.at(-1)).to.equal('src/index.cjs');
    const startFlags = start.slice(2, -1);
    const shebang = readFileSync(join(ROOT, pkg.bin.tracklane), 'utf8').split('\n')[0];
    expect(shebang.startsWith('#!/usr/bin/env -S node')).to.equal(true);
    expect(shebang.split(/\s+/).slice(3)).to.deep.equal(startFlags);
    expect(startFlags).to.include.members(['--max-semi-space-size=8', '--no-parallel-scavenge', '--heap-growing-percent=100']);
  });
});
