// `node --import tsx test/bench/side-setup.ts <root>` with a SetupTask (reference.ts) on
// stdin: does in-process bench setup with the modules of the checkout at <root>, this tree or
// a reference build, so each side's store is made by its own code (its schema, its migrations).
// Prints the result as JSON. Tasks: `accounts` (bench accounts, each with one destination per
// double URL given: payloads.ts's benchAccount of that checkout), `backlog` (that many accepted
// checkout events stored for an account, as the backlog-drain row needs).
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { SetupTask } from './reference.ts';

const root = process.argv[2];
if (!root) throw new Error('usage: side-setup.ts <checkout root> < task.json');
/** A module of the checkout at `root`. */
const load = (path: string) => import(pathToFileURL(join(root, path)).href);

async function main(): Promise<void> {
  let input = '';
  for await (const chunk of process.stdin) input += chunk;
  const task = JSON.parse(input) as SetupTask;
  const { loadConfig } = await load('src/config.ts');
  const { openStore } = await load('src/store/open-store.ts');
  const store = await openStore(loadConfig(task.env));
  try {
    if (task.task === 'accounts') {
      const { benchAccount } = await load('test/bench/payloads.ts');
      const out = [];
      for (const a of task.accounts) {
        // benchAccount reads each double's url only.
        const doubles = new Map(Object.entries(a.doubles ?? {}).map(([type, url]) => [type, { url }]));
        out.push(await benchAccount(store, a.name, { doubles, country: a.country }));
      }
      process.stdout.write(JSON.stringify(out));
    } else {
      const { checkout } = await load('test/bench/payloads.ts');
      const { validateEvent } = await load('src/schema/validate-event.ts');
      const { SPEC_EVENT_NAMES } = await load('src/accounts/types.ts');
      const ctx = { approvedEvents: new Set(SPEC_EVENT_NAMES), defaultTaxRate: 19, host: null };
      for (let i = 0; i < task.events; i += 1_000) {
        const now = Date.now();
        await store.events.append(Array.from({ length: Math.min(1_000, task.events - i) }, (_, k) => {
          const id = `drain-${i + k}`;
          const r = validateEvent(checkout(id), ctx);
          return { id: randomUUID(), scriptId: task.scriptId, name: 'checkout_completed', eventId: id, status: 'accepted', source: 'event', requestId: 'bench', receivedAt: now, errors: [], warnings: r.warnings, payload: r.event };
        }));
      }
      process.stdout.write(JSON.stringify({ stored: task.events }));
    }
  } finally {
    await store.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
