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

  it('sets only variables the configuration reads, and may write the DATA_DIR its settings file sets', () => {
    const read = new Set([...config.matchAll(/(?:str|int)\(env, '([A-Z_]+)'/g)].map((m) => m[1]));
    const set = value('Environment').map((e) => e.slice(0, e.indexOf('=')));
    for (const name of set.filter((n) => n !== 'ENV_FILE')) expect(read.has(name), `${name} is read by src/config.ts`).to.equal(true);
    expect(set, 'DATA_DIR is in the settings file the CLI reads too, not in the unit alone').to.not.include('DATA_DIR');
    const envFile = value('Environment').find((e) => e.startsWith('ENV_FILE='))!.slice('ENV_FILE='.length);
    const dataDir = unit.match(new RegExp(`^#\\s+echo DATA_DIR=(\\S+) >> ${envFile}$`, 'm'))?.[1];
    expect(dataDir, 'the install steps put DATA_DIR in the settings file').to.be.a('string');
    expect(value('ReadWritePaths').join(' ').split(/\s+/)).to.include(dataDir);
    expect(unit, 'the CLI in the checkout reads the same file').to.match(new RegExp(`^#\\s+ln -s ${envFile} /opt/tracklane/\\.env\\b`, 'm'));
  });
});
