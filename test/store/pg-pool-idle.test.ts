// The PostgreSQL pool keeps an idle client past the safety read of an idle instance (every
// HEARD_POLL_MS on each thread, announced-poll.ts; the stats roll-up at that pace too): with an
// idle timeout no longer than that, each read found the client the last one used closed a
// moment before and opened another (a TCP connect, authentication and a new backend process:
// several wakes of the thread, and the backend's start-up) every 30 s per thread.
import { expect } from 'chai';
import { HEARD_POLL_MS } from '../../src/announced-poll.ts';
import { createPool } from '../../src/store/postgres/connection.ts';

describe('PostgreSQL pool: idle clients', () => {
  it('keeps an idle client longer than the safety reads come', async () => {
    const pool = createPool({ url: 'postgres://127.0.0.1:1/none' }); // lazy: connects to nothing
    try {
      expect(pool.options.idleTimeoutMillis, 'idle timeout, ms').to.be.greaterThan(HEARD_POLL_MS);
    } finally {
      await pool.end();
    }
  });
});
