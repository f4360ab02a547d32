// An EventRecord as both stores' append transactions consume it: plain strings and numbers
// (cheap to post to the SQLite commit thread, sqlite/writer-thread.ts), the JSON columns already
// serialised, the dedup key space and the funnel products worked out. Loaded in the commit
// thread: no top-level await.
import { FUNNEL_SOURCE_EVENTS, type DedupEnvironment, type EventRecord, type EventStatus } from './types.ts';

/** An EventRecord as the append transaction consumes it. */
export interface PreparedRow {
  id: string;
  scriptId: string;
  name: string | null;
  eventId: string | null;
  /** The dedup key space: `dev` events never claim the key a production event needs. */
  environment: DedupEnvironment;
  /** The status the intake decided; an accepted row may still turn out a duplicate. */
  status: EventStatus;
  source: string;
  requestId: string;
  receivedAt: number;
  errors: string;
  warnings: string;
  payload: string;
  /** Product ids to record as seen if the row is stored as accepted (FUNNEL_SOURCE_EVENTS only). */
  productIds: string[];
}

/** Product ids of a normalised event payload. */
function productIds(payload: unknown): string[] {
  const products = (payload as { products?: { id?: unknown }[] } | null)?.products;
  return Array.isArray(products) ? products.map((p) => p?.id).filter((id): id is string => typeof id === 'string') : [];
}

/** The environment an accepted, normalised payload declares; anything else counts as prod. */
export function dedupEnvironment(payload: unknown): DedupEnvironment {
  const context = (payload as { context?: { environment?: unknown } } | null)?.context;
  return context?.environment === 'dev' ? 'dev' : 'prod';
}

export function prepareRow(r: EventRecord): PreparedRow {
  return {
    id: r.id, scriptId: r.scriptId, name: r.name, eventId: r.eventId, environment: dedupEnvironment(r.payload),
    status: r.status, source: r.source,
    requestId: r.requestId, receivedAt: r.receivedAt,
    errors: JSON.stringify(r.errors), warnings: JSON.stringify(r.warnings), payload: JSON.stringify(r.payload),
    productIds: r.name !== null && FUNNEL_SOURCE_EVENTS.has(r.name) ? productIds(r.payload) : [],
  };
}

export const DEFAULT_DEDUP_WINDOW_MS = 7 * 86_400_000;

