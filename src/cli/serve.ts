// `tracklane serve`: the same as `npm start`. The server entry starts listening
// and installs its own shutdown handling when imported.
import { parseCommand, positionals } from './args.ts';
import { CliError } from './output.ts';
import { usageFor } from './usage.ts';

export async function runServe(args: string[]): Promise<void> {
  const { values, positionals: pos } = parseCommand(args, {}, ['serve']);
  if (values.help) return void process.stdout.write(usageFor('serve'));
  positionals(pos, [], ['serve']);
  const entry = new URL('../index.ts', import.meta.url);
  try {
    await import(entry.href);
  } catch (err) {
    const e = err as Error & { code?: string; url?: string };
    if (e.code === 'ERR_MODULE_NOT_FOUND' && e.message.includes(entry.pathname)) {
      throw new CliError('the server entry src/index.ts is missing from this build');
    }
    throw err;
  }
}
