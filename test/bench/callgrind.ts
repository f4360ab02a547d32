// What the callgrind benches (instructions.ts, drain-instructions.ts) read back: valgrind's
// callgrind writes one file per thread (`--separate-threads=yes`), `thread: 1` the main thread.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Instructions counted per thread number, summed over the files callgrind wrote to `outDir`. */
export function instructionsByThread(outDir: string): Map<number, number> {
  const byThread = new Map<number, number>();
  for (const f of readdirSync(outDir)) {
    const text = readFileSync(join(outDir, f), 'utf8');
    const thread = Number(text.match(/^thread: (\d+)/m)?.[1] ?? 0);
    byThread.set(thread, (byThread.get(thread) ?? 0) + Number(text.match(/^totals: (\d+)/m)?.[1] ?? 0));
  }
  return byThread;
}
