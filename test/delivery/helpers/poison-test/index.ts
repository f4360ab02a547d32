// A destination plugin for tests only (a folder the poison-event tests add to PLUGINS_DIR):
// its attribution refine step, which runs whenever any destination maps an event, makes the
// mapping of a marked event kill or stall the thread it runs on, as a runaway rule would:
// `user.id` "poison-oom:<file>" allocates until the heap limit ends the thread, and
// "poison-hang:<file>" never returns, both only while <file> exists (deleting it is the fix).
import { existsSync } from 'node:fs';
import type { DestinationPlugin } from '../../../../src/destinations/types.ts';

const kept: unknown[] = [];

const poisonTest: DestinationPlugin = {
  name: 'poison-test',
  version: '1.0.0',
  category: 'webhook',
  consent: null,
  description: 'Test fixture: kills or stalls the mapping of marked events',
  settingsSchema: { type: 'object', properties: { endpoint: { type: 'string' }, events: { type: 'array' }, consent_category: { type: 'string' } } },
  secretSettings: [],
  identifiers: null,
  attribution: {
    ids: {},
    refine(ctx) {
      const id = typeof ctx.user?.id === 'string' ? ctx.user.id : '';
      const [kind, file] = id.split(/:(.*)/s);
      if (file === undefined || !existsSync(file)) return;
      if (kind === 'poison-oom') for (;;) kept.push(new Array(1_000_000).fill(id));
      if (kind === 'poison-hang') for (;;);
    },
  },
  batch: { maxEvents: 1 },
  buildRequests: () => [],
  classifyResponse: () => ({ outcome: 'success' }),
};

export default poisonTest;
