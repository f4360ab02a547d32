// The custom-record store contract: durable records a custom endpoint keeps beside its
// events, each request resolved only after its rows are committed. SQLite:
// src/store/sqlite/custom-records.ts; PostgreSQL: src/store/postgres/custom-records.ts.

export interface StoredCustomRecord {
  scriptId: string;
  customer: string;
  endpoint: string;
  type: string;
  /** Idempotency key: a record with the same (account, endpoint, type, key) replaces the stored one. */
  key: string | null;
  requestId: string;
  receivedAt: number;
  data: Record<string, unknown>;
}

export interface CustomRecordFilter {
  scriptId?: string;
  endpoint?: string;
  limit?: number;
}

export interface CustomRecordStore {
  /** Resolves once every row is committed; rejects when the commit failed (then none is). */
  write(rows: StoredCustomRecord[]): Promise<void>;
  /** Newest first. */
  list(filter?: CustomRecordFilter): Promise<StoredCustomRecord[]>;
  /** Resolves when nothing is waiting to be written. */
  drain(): Promise<void>;
  close(): Promise<void>;
}
