// Reads the deployment as an operator does: the README's "Deploying" shell blocks (each named
// by its first line, `# install tracklane, as root`) and the unit's key=value settings.
import { shellBlock } from './readme-text.ts';

/** The text of the Deploying section's shell block whose first line starts with `first`, that line left out. */
export const deployBlock = (readme: string, first: string): string => shellBlock(readme, 'Deploying', first);

/** A unit file's values of `key` (comments left out), in order. */
export function unitSettings(unit: string): (key: string) => string[] {
  const settings = unit.split('\n').filter((l) => /^[A-Za-z]+=/.test(l)).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const);
  return (key) => settings.filter(([k]) => k === key).map(([, v]) => v);
}
