// The service's version as package.json states it: `--version` prints it and every outbound
// request names it in its User-Agent. Read once, from the project root (sources and build alike).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from './build-state.cjs';

let version: string | undefined;

export function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(join(projectRoot(import.meta.url), 'package.json'), 'utf8')) as { version: string }).version;
  return version;
}
