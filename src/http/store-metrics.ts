// Gauges read from the store at scrape time: the SQLite WAL's size, so an operator sees the
// log stay within its bound (src/store/sqlite/wal-checkpoints.ts) or grow when it cannot.
import { Gauge, type Registry } from 'prom-client';
import type { Store } from '../store/types.ts';

export function registerStoreMetrics(registry: Registry, store: Pick<Store, 'walBytes'>): void {
  const walBytes = store.walBytes?.bind(store);
  if (walBytes === undefined) return; // PostgreSQL: no file of ours to watch
  new Gauge({
    name: 'tracklane_sqlite_wal_bytes',
    help: 'Size of the SQLite write-ahead log file in bytes',
    registers: [registry],
    collect() {
      this.set(walBytes());
    },
  });
}
