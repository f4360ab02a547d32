// `tracklane events list`: events written through the store, read back through the CLI.
import { join } from 'node:path';
import { expect } from 'chai';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { EventRecord } from '../../src/store/types.ts';
import { expectFailure, tempCli, type TempCli } from './run-cli.ts';

interface EventJson {
  id: string; script_id: string; event_id: string | null; name: string | null; status: string;
  received_at: string; errors: { field: string; code: string; message: string }[]; warnings: unknown[];
}

const T0 = Date.parse('2025-03-01T10:00:00.000Z');

function record(over: Partial<EventRecord>): EventRecord {
  return {
    id: 'evt-0', scriptId: 'AAAA1111', name: 'checkout_completed', eventId: 'ord-1', status: 'accepted',
    source: 'event', requestId: 'req-0', receivedAt: T0, errors: [], warnings: [], payload: {}, ...over,
  };
}

describe('cli: events', function () {
  this.timeout(30_000);
  let cli: TempCli;
  before(() => {
    cli = tempCli();
  });
  after(() => cli.remove());

  it('list on an empty store prints []', async () => {
    expect(await cli.json('events', 'list')).to.deep.equal([]);
  });

  it('lists stored events newest first, filtered by account, status and limit', async () => {
    const { script_id: id } = await cli.json<{ script_id: string }>('accounts', 'create', '--name', 'Events');
    const store = openSqliteStore({ file: join(cli.dataDir, 'tracklane.db') });
    const missing = { field: 'event.value', code: 'REQUIRED_FIELD_MISSING' as const, message: 'event.value is required' };
    await store.events.append([
      record({ id: 'e1', scriptId: id, eventId: 'ord-1', receivedAt: T0 }),
      record({ id: 'e2', scriptId: id, eventId: 'ord-2', status: 'rejected', receivedAt: T0 + 1000, errors: [missing] }),
      record({ id: 'e3', scriptId: id, eventId: 'ord-1', status: 'duplicate', receivedAt: T0 + 2000 }),
      record({ id: 'e4', scriptId: 'OTHER999', eventId: 'x-1', name: 'lead_created', receivedAt: T0 + 3000 }),
    ]);
    await store.close();

    const [all, rejected, mine, human] = await Promise.all([
      cli.json<EventJson[]>('events', 'list'),
      cli.json<EventJson[]>('events', 'list', '--status', 'rejected'),
      cli.json<EventJson[]>('events', 'list', '--account', id, '--limit', '2'),
      cli.run('events', 'list', '--account', id),
    ]);
    expect(all.map((e) => e.id)).to.deep.equal(['e4', 'e3', 'e2', 'e1']);
    expect(all[3]).to.deep.include({ id: 'e1', script_id: id, event_id: 'ord-1', name: 'checkout_completed', status: 'accepted',
      received_at: '2025-03-01T10:00:00.000Z', errors: [], warnings: [] });
    expect(rejected).to.have.length(1);
    expect(rejected[0]).to.deep.include({ event_id: 'ord-2', status: 'rejected', errors: [missing] });
    expect(mine.map((e) => [e.id, e.status])).to.deep.equal([['e3', 'duplicate'], ['e2', 'rejected']]);
    expect(human.code).to.equal(0);
    expect(human.stdout).to.match(/^RECEIVED_AT\s+SCRIPT_ID\s+STATUS\s+NAME\s+EVENT_ID\s+ERRORS$/m);
    expect(human.stdout).to.match(/rejected\s+checkout_completed\s+ord-2\s+event\.value REQUIRED_FIELD_MISSING$/m);
    expect(human.stdout).to.not.include('OTHER999');
  });

  it('validates its options', async () => {
    const [status, limit, account] = await Promise.all([
      cli.run('events', 'list', '--status', 'lost', '--json'),
      cli.run('events', 'list', '--limit', 'ten', '--json'),
      cli.run('events', 'list', '--account', 'NOPE0000', '--json'),
    ]);
    expectFailure(status, 1, '--status must be one of accepted, rejected, duplicate, got "lost"');
    expectFailure(limit, 1, '--limit must be a whole number, got "ten"');
    expectFailure(account, 1, 'no account with script id "NOPE0000"');
  });
});
