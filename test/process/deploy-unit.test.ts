// The systemd unit shipped in deploy/: it starts the service the way the README says
// (`npm start`, which execs node so the stop signal reaches the server), gives the drain
// room to finish, lets the service write its data directory, and sets only variables the
// configuration reads (a misspelt one would be ignored without a word).
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const unit = readFileSync(`${ROOT}deploy/tracklane.service`, 'utf8');
const config = readFileSync(`${ROOT}src/config.ts`, 'utf8');
const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { scripts: Record<string, string> };

/** key=value lines of the unit, comments left out. */
const settings = unit.split('\n').filter((l) => /^[A-Za-z]+=/.test(l)).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const);
const value = (key: string) => settings.filter(([k]) => k === key).map(([, v]) => v);

describe('deploy/tracklane.service', () => {
  it('runs npm start, whose script execs node, and stops with SIGTERM leaving the 10 s drain room', () => {
    expect(value('ExecStart')).to.deep.equal(['/usr/bin/npm start']);
    expect(pkg.scripts.start).to.match(/^exec node /);
    expect(value('KillSignal')).to.deep.equal(['SIGTERM']);
    expect(Number(value('TimeoutStopSec')[0])).to.be.greaterThan(10);
  });

  it('sets only variables the configuration reads, and may write the DATA_DIR it sets', () => {
    const read = new Set([...config.matchAll(/(?:str|int)\(env, '([A-Z_]+)'/g)].map((m) => m[1]));
    const set = value('Environment').map((e) => e.slice(0, e.indexOf('=')));
    expect(set).to.include('DATA_DIR');
    for (const name of set) expect(read.has(name), `${name} is read by src/config.ts`).to.equal(true);
    const dataDir = value('Environment').find((e) => e.startsWith('DATA_DIR='))!.slice('DATA_DIR='.length);
    expect(value('ReadWritePaths').join(' ').split(/\s+/)).to.include(dataDir);
  });
});
