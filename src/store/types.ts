// The store interface, fulfilled by SQLite (src/store/sqlite/) and PostgreSQL
// (src/store/postgres/): every method is async and takes plain data. The records it
// stores are the domain's (src/domain/records.ts), re-exported here.
import type { Account, AccountPatch, NewAccount, TokenRecord } from '../domain/accounts.ts';
import type { DeliveryStore } from './delivery-contract.ts';
import type { RuleFile } from '../domain/rule-documents.ts';

export type { DedupEnvironment, DestinationRecord, EventRecord, EventStatus } from '../domain/records.ts';
import type { DedupEnvironment, DestinationRecord, EventRecord, EventStatus } from '../domain/records.ts';

export interface EventFilter {
  scriptId?: string;
  status?: EventStatus;
  /** The customer's event.id (for orders, the order number). */
  eventId?: string;
  /** tracklane's id. */
  id?: string;
  name?: string;
  /** received_at ≥ since, < until (ms). */
  since?: number;
  until?: number;
  /** tracklane's id or the customer's event.id. */
  search?: string;
  /** Only events stored before this position (a listed event's `seq`: the next page of a listing). */
  beforeSeq?: number;
  limit?: number;
}

export interface AccountStore {
  create(a: NewAccount, tokenHash: string, tokenPrefix: string): Promise<Account>;
  get(scriptId: string): Promise<Account | null>;
  list(): Promise<Account[]>;
  update(scriptId: string, patch: AccountPatch): Promise<Account | null>;
  /** Tokens not yet expired at `now`. */
  activeTokens(scriptId: string, now: number): Promise<TokenRecord[]>;
  /**
   * What a credential check reads, as of one moment: the account (null when unknown) and
   * its tokens not yet expired at `now`. Both reads run whether or not the account exists
   * (equal work for unknown ids). Bounded as intake's commits are: a lock held elsewhere on
   * accounts or access_tokens fails it with StoreBusyError after intake's lock timeout,
   * so the request answers 503 instead of waiting as long as the lock lasts.
   */
  credentials(scriptId: string, now: number): Promise<Credentials>;
  /** Adds a new current token and makes every other current token expire at `oldExpiresAt`, in one transaction. */
  rotateToken(scriptId: string, hash: string, prefix: string, now: number, oldExpiresAt: number): Promise<void>;
}

export interface Credentials {
  account: Account | null;
  tokens: TokenRecord[];
}

/** Events whose product ids count as seen for the funnel check. */
export const FUNNEL_SOURCE_EVENTS: ReadonlySet<string> = new Set(['product_viewed', 'product_added_to_cart']);

export interface EventStore {
  /**
   * Inserts all rows in one transaction: all are durable when it resolves, none when it
   * rejects. In the same transaction an accepted row whose (account, environment, name, event id) was
   * first seen within the dedup window is stored as `duplicate` instead, and product ids of
   * accepted FUNNEL_SOURCE_EVENTS are recorded as seen. Resolves with each row's stored status.
   */
  append(rows: EventRecord[]): Promise<EventStatus[]>;
  /** Whether an accepted event with this (account, environment, name, event id) was stored within the dedup window; environment defaults to prod. */
  isDuplicate(scriptId: string, name: string, eventId: string, now: number, environment?: DedupEnvironment): Promise<boolean>;
  /** Which of `productIds` this account has sent in a FUNNEL_SOURCE_EVENTS event. */
  seenProducts(scriptId: string, productIds: readonly string[]): Promise<Set<string>>;
  /** Newest first. */
  list(filter: EventFilter): Promise<ListedEvent[]>;
  /**
   * The same events as list(), newest first, without their payload and with their issues
   * counted in the database: a page of large events costs the caller no parsing.
   */
  summaries(filter: EventFilter): Promise<EventSummary[]>;
}

/** A listed event without its payload, its errors and warnings counted. */
export interface EventSummary extends Omit<EventRecord, 'payload' | 'errors' | 'warnings' | 'requestId'> {
  seq: number;
  errorCount: number;
  warningCount: number;
  /** The first error's code, or null. */
  firstErrorCode: string | null;
}

/** A stored event with its position in the table, which orders listings and pages them. */
export interface ListedEvent extends EventRecord {
  seq: number;
}

export type DestinationPatch = Partial<Pick<DestinationRecord, 'name' | 'enabled' | 'settings'>>;

export interface DestinationStore {
  add(d: Omit<DestinationRecord, 'createdAt' | 'updatedAt'>): Promise<DestinationRecord>;
  /** The account's destinations that were not removed, oldest first. */
  list(scriptId: string): Promise<DestinationRecord[]>;
  get(scriptId: string, id: string): Promise<DestinationRecord | null>;
  /** A destination that was not removed, by its id alone (operators' tools see every account). */
  find(id: string): Promise<DestinationRecord | null>;
  update(scriptId: string, id: string, patch: DestinationPatch): Promise<DestinationRecord | null>;
  /**
   * Removes it from the account (kept on record for past deliveries) and, in the same
   * transaction, cancels its pending deliveries that no sender holds (skip reason
   * `destination_removed`). `removed` is false if it was unknown.
   */
  remove(scriptId: string, id: string): Promise<{ removed: boolean; canceled: number }>;
}

/** `default` for the defaults of a destination type, or the script id of an account's overrides. */
export type RuleScope = string;

/** One immutable, stored version of one rule file. */
export interface RuleVersion {
  version: number;
  scope: RuleScope;
  destination: string;
  /** The rule file exactly as published, disabling entries included. */
  document: RuleFile;
  author: string;
  message: string;
  createdAt: number;
  /** Whether it is the live version of its (scope, destination) now. */
  live: boolean;
}

/** One entry of the rule history: a version made live by a publish or a rollback. */
export interface RuleChange {
  id: number;
  version: number;
  scope: RuleScope;
  destination: string;
  /** `revert`: no version is live any more (the file or plugin default serves); `version` is the one that was. */
  action: 'publish' | 'rollback' | 'revert';
  author: string;
  message: string;
  at: number;
  /** Whether this change's version is still the live one of its (scope, destination). */
  live: boolean;
}

export interface NewRuleVersion {
  scope: RuleScope;
  destination: string;
  document: RuleFile;
  author: string;
  message: string;
}

/** Only write when the revision is still this one (what the caller checked against). */
export interface RuleWriteGuard {
  ifRevision?: number;
}

/** Thrown by a guarded write when another change came first: check again and retry. */
export class StaleRuleRevisionError extends Error {
  override name = 'StaleRuleRevisionError';
  constructor(readonly expected: number, readonly actual: number) {
    super(`the rules changed while this change was checked (revision ${actual}, checked at ${expected})`);
  }
}

/**
 * Mapping rules as versioned data. Versions are never changed or deleted; which one is live
 * per (scope, destination) changes by publish and rollback, each recorded in the history.
 * Live versions replace the rule file of the same scope and destination (src/rules/README.md).
 */
export interface RuleVersionStore {
  /** Stores a new immutable version and makes it the live one for (scope, destination), in one transaction. */
  publish(v: NewRuleVersion, now: number, guard?: RuleWriteGuard): Promise<RuleVersion>;
  /** Several versions at once, all live or none (one transaction); in the order given. */
  publishAll(vs: readonly NewRuleVersion[], now: number, guard?: RuleWriteGuard): Promise<RuleVersion[]>;
  /** Makes an existing version live again (records a 'rollback' change); null when the version does not exist. */
  rollback(version: number, author: string, message: string, now: number, guard?: RuleWriteGuard): Promise<RuleVersion | null>;
  /**
   * Leaves (scope, destination) without a live version, so its RULES_DIR file or plugin default
   * serves again (records a 'revert' change naming the version that was live); null when none was.
   */
  revert(key: { scope: RuleScope; destination: string }, author: string, message: string, now: number, guard?: RuleWriteGuard): Promise<RuleChange | null>;
  get(version: number): Promise<RuleVersion | null>;
  /** Every live version, defaults first, then by script id and destination. */
  live(): Promise<RuleVersion[]>;
  /** Changes newest first, filtered; `limit` defaults to 100. */
  history(filter: { scope?: RuleScope; destination?: string; limit?: number }): Promise<RuleChange[]>;
  /** A number that changes whenever any live version changes (max change id; 0 when none). Cheap: it is polled every second. */
  revision(): Promise<number>;
}

/** What new work a shared store announces (onWork). */
export type WorkKind = 'events' | 'deliveries';

export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  readonly accounts: AccountStore;
  readonly events: EventStore;
  readonly destinations: DestinationStore;
  /** Fan-out queue, deliveries, attempts and destination health (store/delivery-contract.ts). */
  readonly deliveries: DeliveryStore;
  /** Versioned mapping rules (see RuleVersionStore). */
  readonly rules: RuleVersionStore;
  /** Resolves when the store answers a trivial query. */
  ping(): Promise<void>;
  /** SQLite: the size of the WAL file now, in bytes (the /metrics gauge tracklane_sqlite_wal_bytes). */
  walBytes?(): number;
  /**
   * Shared stores (PostgreSQL): calls `listener` when any instance commits new work, saying
   * which: `events` to fan out (an intake commit), or `deliveries` due for the send lanes
   * (stored by a fan-out, handed back, replayed, resumed); returns the unsubscribe. Absent
   * where one process owns the store.
   */
  onWork?(listener: (kind: WorkKind) => void): () => void;
  /**
   * Shared stores: calls `onAnnounce` (later, never from within this call) on whatever any
   * instance announces (work, rule publishes, destination changes) and when announcements may
   * have been missed (the connection that hears them was lost); returns the stop, or null
   * while they cannot be heard. What lets an idle delivery thread slow its polls (poll-tick.ts).
   */
  watchAnnouncements?(onAnnounce: () => void): (() => void) | null;
  /**
   * Shared stores: as watchAnnouncements, for rule publishes and destination changes alone, on
   * a connection of its own that hears no work (the HTTP thread's rule revision read).
   */
  watchChanges?(onChange: () => void): (() => void) | null;
  /**
   * Shared stores: claims one run of a scheduled job (`slot`: its scheduled minute) for
   * `owner`; false when another instance already claimed it, so each runs once per cluster.
   */
  claimRun?(job: string, slot: number, owner: string): Promise<boolean>;
  close(): Promise<void>;
}
