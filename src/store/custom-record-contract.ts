// The custom-record store contract: durable records a custom endpoint keeps beside its
// events, each request resolved only after its rows are committed; and how often each
// account used each endpoint version (counted in memory, written every second). SQLite:
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

/** One request served by an endpoint version. */
export interface VersionUse {
  scriptId: string;
  customer: string;
  endpoint: string;
  version: number;
  env: 'production' | 'test';
  at: number;
}

/** Uses of an endpoint version by one account in one env, since the version first answered it. */
export interface VersionUsage extends Omit<VersionUse, 'at'> {
  uses: number;
  firstUsedAt: number;
  lastUsedAt: number;
}

export interface CustomRecordStore {
  /** Counts a use; written with others within a second, and by drain(). */
  countUse(use: VersionUse): void;
  /** Every account's uses of the customer's endpoint versions (every customer's without one). */
  listUsage(customer?: string): Promise<VersionUsage[]>;
  /** Resolves once every row is committed; rejects when the commit failed (then none is). */
  write(rows: StoredCustomRecord[]): Promise<void>;
  /** Newest first. */
  list(filter?: CustomRecordFilter): Promise<StoredCustomRecord[]>;
  /** Resolves when nothing is waiting to be written. */
  drain(): Promise<void>;
  close(): Promise<void>;
}
