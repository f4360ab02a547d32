// `tracklane serve`: the same as `npm start`. The server entry starts listening and
// installs its own signal handling when imported, so importing it is all there is; it runs
// in the project folder, as npm start does, so relative settings (DATA_DIR=./data) mean the
// same folders whichever folder `serve` was typed in.
import { projectRoot } from '../build-state.cjs';
import { parseCommand, positionals } from './args.ts';
import { usageFor } from './usage.ts';

/** Runs `serve`; `--json` is accepted and changes nothing (the server logs JSON already). */
export async function runServe(args: string[]): Promise<void> {
  const { values, positionals: pos } = parseCommand(args, {}, ['serve']);
  if (values.help) return void process.stdout.write(usageFor('serve'));
  positionals(pos, [], ['serve']);
  process.chdir(projectRoot(import.meta.url));
  await import('../index.ts');
}
