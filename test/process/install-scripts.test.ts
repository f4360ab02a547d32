// Every installed dependency that runs an install script is declared in package.json's
// `allowScripts`, so npm (which blocks undeclared install scripts) builds better-sqlite3's
// native module and installs esbuild's binary, and `npm ci` has nothing to warn about.
import { expect } from 'chai';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LIFECYCLE = ['preinstall', 'install', 'postinstall'];

/** Installed packages (top level and scoped) whose package.json declares an install-time script. */
function packagesWithInstallScripts(): string[] {
  const dir = join(ROOT, 'node_modules');
  const names: string[] = [];
  for (const entry of readdirSync(dir)) {
    if (entry.startsWith('.')) continue;
    const scoped = entry.startsWith('@') ? readdirSync(join(dir, entry)).map((n) => `${entry}/${n}`) : [entry];
    for (const name of scoped) {
      const file = join(dir, name, 'package.json');
      if (!existsSync(file)) continue;
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { scripts?: Record<string, string>; gypfile?: boolean };
      const hasScript = LIFECYCLE.some((s) => pkg.scripts?.[s] !== undefined);
      // npm runs `node-gyp rebuild` for a package with a binding.gyp even without a script.
      const gyp = pkg.gypfile !== false && existsSync(join(dir, name, 'binding.gyp'));
      if (hasScript || gyp) names.push(name);
    }
  }
  return names.sort();
}

describe('install: dependency install scripts are declared', () => {
  it('package.json allowScripts approves each dependency that has an install script, and names no other', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> };
    const found = packagesWithInstallScripts();
    expect(found, 'the native SQLite driver needs its build').to.include('better-sqlite3');
    expect(Object.keys(pkg.allowScripts ?? {}).sort()).to.deep.equal(found);
    expect(Object.values(pkg.allowScripts ?? {}).every((v) => v === true)).to.equal(true);
  });
});
